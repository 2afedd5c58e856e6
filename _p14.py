import numpy as np, runtime as rt, d2s
def f(x):
    losses = [float(x[0]), float(x[1])]
    fr = [(x > 0).astype("float32").mean().item()]
    return float(np.mean(losses)), np.mean(fr), np.sum(losses), np.max([x[0], x[1]]), np.std(losses)
def g(x):
    lst = []
    for i in range(int(x.shape[0] * 0) + int(x[2])):
        lst.append(float(x[i]))
    return np.mean(lst)
for fn in (f, g):
  for v in ([1., 2., 3.], [3., -1., 1.]):
    t = rt.to_tensor(np.array(v, np.float32))
    e = fn(t)
    try: s = d2s.to_static(fn)(t)
    except Exception as ex: s = f"EXC {type(ex).__name__}: {str(ex)[:300]}"
    print(repr(e) == repr(s), repr(e), repr(s))
