"""Lists and dicts: append in tensor loops (tensor arrays), pop, index, slice, dict reads and
writes inside tensor branches and loops."""
import runtime as rt

from .registry import case, f32, i64, neg, pos, signed


@case(args=[(f32([1.0, 2.0]),), (f32([20.0, 1.0]),), (f32([5.0, 0.0]),)])
def append_in_tensor_while(x):
    outs = [x]
    while rt.max(x) < 16:
        x = x * 2
        outs.append(x)
    return rt.stack(outs[-1:]).sum(axis=0), x


@case(args=[(pos(2), 3), (pos(2), 1)])
def append_in_python_for(x, n):
    outs = []
    for i in range(n):
        x = x + i
        outs.append(x)
    return rt.stack(outs)


@case(args=[(f32([1.0, -1.0, 1.0]),), (f32([1.0, 1.0, 1.0]),), (f32([-1.0, -1.0, -1.0]),)])
def append_with_tensor_trip_count(x):
    n = (x > 0).astype("int64").sum()
    outs = [rt.zeros([3])]
    for i in range(n):
        outs.append(x * (i + 1))
    total = rt.zeros([3])
    for t in outs:
        total = total + t
    return total


@case(args=[(pos(2),), (neg(2),)])
def list_pop(x):
    xs = [x, x * 2, x * 3]
    last = xs.pop()
    first = xs.pop(0)
    if rt.mean(last) > 0:
        return last + first + xs[0]
    return last - first


@case(args=[(pos(2), 1), (pos(2), -1), (neg(2), -2)])
def list_index_python(x, k):
    xs = [x, x + 1, x + 2]
    y = xs[k]
    if rt.sum(y) > 3:
        y = y * 0
    return y


@case(args=[(pos(2),), (neg(2),)])
def list_slice(x):
    xs = [x, x * 2, x * 3, x * 4]
    total = rt.zeros([2])
    for t in xs[1:3]:
        if rt.mean(t) > 0:
            total = total + t
        else:
            total = total - t
    return total + xs[-1]


@case(args=[(pos(2),), (neg(2),)])
def append_under_tensor_if(x):
    out = []
    if rt.mean(x) > 0:
        out.append(x * 2)
    else:
        out.append(-x)
    return out[0] + 1


@case(args=[(pos(2),), (neg(2),)], batch=lambda b: (signed(b, 3),))
def dict_write_in_branches(x):
    d = {}
    if rt.mean(x) > 0:
        d["y"] = x * 2
    else:
        d["y"] = x - 1
    return d["y"]


@case(args=[(f32([1.0]),), (f32([50.0]),)])
def dict_read_in_loop(x):
    cfg = {"scale": 2.0, "limit": 10.0}
    while rt.sum(x) < cfg["limit"]:
        x = x * cfg["scale"]
    return x


@case(args=[(f32([1.0]),), (f32([-1.0]),), (f32([30.0]),)])
def dict_update_in_tensor_loop(x):
    state = {"acc": rt.zeros([1]), "x": x}
    while rt.sum(state["x"]) > 0 and rt.sum(state["x"]) < 20:
        state["acc"] = state["acc"] + state["x"]
        state["x"] = state["x"] * 2
    return state["acc"], state["x"]


@case(args=[(pos(2),), (neg(2),)])
def return_dict(x):
    if rt.sum(x) > 0:
        y, z = x, x * 2
    else:
        y, z = -x, x
    return {"out": y, "aux": z}


@case(args=[(pos(2),), (neg(2),)])
def setitem_in_list(x):
    xs = [x, x + 1, x + 2]
    for i in range(3):
        if rt.mean(xs[i]) > 1:
            xs[i] = xs[i] * 2
    return rt.concat(xs)


@case(args=[(pos(2),), (neg(2),)])
def list_extend_and_concat(x):
    a = [x]
    a.extend([x + 1, x + 2])
    b = a + [x * 10]
    if rt.mean(b[-1]) > 0:
        return rt.stack(b)
    return rt.stack(b[:2])


@case(args=[(f32([1.0, 2.0]),), (f32([9.0, 1.0]),)])
def tensor_array_last_element(x):
    hist = [x]
    i = 0
    while i < 3:
        x = x + 1
        if rt.max(x) > 10:
            x = x - 10
        hist.append(x)
        i += 1
    return hist[-1], hist[0]


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def nested_lists(x, y):
    grid = [[x, y], [y, x]]
    total = rt.zeros([2])
    for row in grid:
        if rt.mean(row[0]) > 0:
            total = total + row[0] - row[1]
    return total


@case(args=[(pos(2), "a"), (pos(2), "z"), (neg(2), "z")])
def dict_get_default(x, key):
    table = {"a": 3.0, "b": 4.0}
    w = table.get(key, -1.0)
    if rt.mean(x * w) > 0:
        return x * w
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([5.0, 0.0]),), (f32([100.0, 0.0]),)])
def len_of_tensor_array(x):
    outs = []
    while rt.max(x) < 20:
        x = x * 2
        outs.append(x)
    return len(outs)


@case(args=[(i64([2, 0, 1]),), (i64([1, 1, 1]),)])
def dict_of_counts(labels):
    counts = {0: 0, 1: 0, 2: 0}
    for i in range(3):
        if labels[i] == 0:
            counts[0] = counts[0] + 1
        elif labels[i] == 1:
            counts[1] = counts[1] + 1
        else:
            counts[2] = counts[2] + 1
    return counts


@case(args=[(pos(3, 2),), (neg(3, 2),)], batch=lambda b: (signed(b, 2),))
def append_rows_over_batch(x):
    outs = []
    for i in range(x.shape[0]):
        row = x[i]
        outs.append(row * 2 if row.sum() > 0 else row)
    return rt.stack(outs)
