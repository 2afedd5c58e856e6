import runtime as rt, d2s
def lambda_in_loop(values):
    fns = []
    for v in values:
        fns.append(lambda: v + v)
    return [f() for f in fns]
s = d2s.to_static(lambda_in_loop)
print(s.code)
print(lambda_in_loop(rt.to_tensor([1, 2])), s(rt.to_tensor([1, 2])))
def lambda_pairs(values):
    fns = []
    for k, v in enumerate(values):
        fns.append(lambda: v * k)
        fns.append(lambda v=v: v)
    return [f() for f in fns]
s = d2s.to_static(lambda_pairs)
print(lambda_pairs(rt.to_tensor([1, 2])), s(rt.to_tensor([1, 2])))
