"""More idioms of Paddle's dygraph-to-static list and dict tests (test_list.py, test_dict.py,
test_len.py), in new words: items of different shapes appended per branch of a tensor `if`
then popped, appends decided by `x.numpy()[0]`, `pop` of the last item in a Python loop
bounded by a one-element tensor's numpy, dict values replaced in a tensor loop, `len` of a
dict and of a tensor array, dicts of layers' outputs read by key, and a cache dict passed in
and filled."""
import runtime as paddle

from .registry import case, i64, rand


@case(args=[(i64([3]),), (i64([-3]),)])
def pop_of_items_shaped_per_branch(x):
    a = []
    b = [x * 2 + (x + 1)]
    if x > 0:
        a.append(x)
        b.append(x + 1)
        a.append(paddle.full([1], 1, dtype="int64"))
    else:
        a.append(x + 1)
        b.append(x - 1)
        a.append(paddle.full([2], 2, dtype="int64"))
    item1 = a.pop(1)
    return item1, b[-1]


@case(args=[(i64([3, 1]),), (i64([-3, 1]),)])
def append_decided_by_numpy_item(x):
    a = []
    if x.numpy()[0] > 0:
        a.append(x)
    else:
        a.append(paddle.full([2], 9, dtype="int64"))
    return a[0]


@case(args=[(rand(3), 2), (rand(3), 0)])
def dict_values_replaced_in_tensor_loop(x, extra):
    d = {"sum": paddle.zeros([1]), "max": x.max()}
    n = paddle.full([1], 3 + extra, dtype="int64")
    i = paddle.zeros([], dtype="int64")
    while i < n:
        d["sum"] = d["sum"] + x.sum()
        d["max"] = paddle.maximum(d["max"], x[0] + i.astype("float32"))
        i += 1
    return d, len(d)


@case(args=[(i64([2]),), (i64([5]),)])
def len_of_tensor_array_in_condition(n):
    a = []
    for i in range(n):
        a.append(paddle.full([2], 1.0) * i)
    if len(a) > 3:
        out = paddle.stack(a).sum(0)
    else:
        out = a[-1]
    return out, len(a)


@case(args=[(rand(2, 3),), (rand(2, 3) + 2,)])
def cache_dict_passed_in_and_filled(x):
    cache = {}

    def step(h, cache):
        if "k" in cache:
            cache["k"] = paddle.concat([cache["k"], h], axis=0)
        else:
            cache["k"] = h
        return cache["k"].sum(0)

    y = step(x, cache)
    if x.mean() > 1:
        y = step(x * 2, cache)
    return y, cache["k"].shape[0]


@case(args=[(rand(4),), (rand(4) + 3,)])
def dict_get_with_tensor_default(x):
    stats = {"mean": x.mean()}
    scale = stats.get("scale", paddle.ones([1]))
    if stats["mean"] > 1:
        stats["scale"] = scale * 2
    return stats.get("scale", scale) * x
