"""The idioms of Paddle's dygraph-to-static tests of lists, dicts, shapes, slices and item
assignment (test_list.py, test_dict.py, test_tensor_shape.py, test_slice.py,
test_set_value.py, test_jit_setitem.py, test_container.py, test_len.py), in new words: lists
appended to and popped in tensor `if`s and graph loops, a decoder's key/value cache in a dict,
shapes read as Python numbers and as tensors, slices of lists and tensors, and `x[...] = v`."""
import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand, signed


# ---- lists ------------------------------------------------------------------------------
@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 2.0]),)])
def list_append_in_tensor_if(x):
    kept = []
    if x[0] > 0:
        kept.append(x)
    else:
        kept.append(paddle.full([2], -1.0))
    return kept[0]


@case(args=[(f32([1.0, 2.0]), i64([3])), (f32([5.0, 6.0]), i64([1]))])
def list_append_in_tensor_while_then_stack(x, n):
    items = []
    i = 0
    while i < n:
        items.append(x * (i + 1))
        i += 1
    return paddle.stack(items), len(items)


@case(args=[(f32([1.0, 2.0]), i64([4, 4, 4])), (f32([1.0, 2.0]), i64([0]))])
def list_append_in_for_over_shape_then_concat(x, steps):
    items = [x * 0]
    for _ in range(steps.shape[0]):
        x = x + 1
        items.append(x)
    out = paddle.concat(items)
    if out.sum() > 10:
        out = out / 2
    return out[0], out


@case(args=[(f32([3.0]), 4), (f32([3.0]), 2)])
def list_slice_then_index(x, n):
    items = []
    for i in range(n):
        items.append(x + i)
    middle = items[1:3]
    return middle[-1], items[-1], len(middle)


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 2.0]),)])
def list_pop_in_tensor_if(x):
    items = [x, x + 1]
    if x[0] > 0:
        items.append(x * 3)
        last = items.pop()
    else:
        last = items.pop(0)
    return last, items[0]


@case(args=[(f32([2.0]), 3), (f32([2.0]), 2)])
def list_pop_in_python_loop(x, n):
    items = []
    doubles = [x * 2 + (x + 1)]
    for i in range(n):
        items.append(x + i)
        doubles.append(x * 2)
    popped = x
    for _ in range(paddle.ones([1], dtype="int32")):
        popped = items.pop()
    return items[0], popped, doubles[1]


@case(args=[(f32([2.0]), i64([3])), (f32([2.0]), i64([1]))])
def list_pop_in_tensor_while(x, n):
    items = []
    i = 0
    while i < n:
        items.append(x + i)
        i += 1
    last = items.pop()
    return last, len(items)


@case(args=[([1.0, 2.0, 3.0], f32([1.0])), ([0.5], f32([-1.0]))])
def list_argument_extended(weights, x):
    scaled = [w * x for w in weights]
    if x.sum() > 0:
        scaled.append(x * 100)
    else:
        scaled.append(x - 100)
    return paddle.add_n(scaled)


# ---- dicts ------------------------------------------------------------------------------
def _update_cache(cache, key, value):
    cache["k"] = paddle.concat([cache["k"], key], axis=1)
    cache["v"] = paddle.concat([cache["v"], value], axis=1)
    return cache


class AttentionWithCache(nn.Layer):
    """Self-attention decoding one step at a time, with keys and values kept in a dict."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)
        self.v = nn.Linear(4, 4)

    def step(self, x, cache=None):
        q, k, v = self.q(x), self.k(x), self.v(x)
        if cache is not None:
            cache = _update_cache(cache, k, v)
            k, v = cache["k"], cache["v"]
        weights = F.softmax(paddle.matmul(q, k, transpose_y=True) * 0.5)
        return paddle.matmul(weights, v), cache

    def forward(self, x, steps):
        cache = {"k": paddle.zeros([x.shape[0], 0, 4]), "v": paddle.zeros([x.shape[0], 0, 4])}
        outs = []
        for _ in range(steps):
            x, cache = self.step(x, cache)
            outs.append(x)
        if steps == 0:
            x, _ = self.step(x)
            outs.append(x)
        return paddle.concat(outs, axis=1), cache["k"].shape[1]


case(args=[(rand(2, 1, 4), 3), (rand(2, 1, 4), 0)])(AttentionWithCache)


@case(args=[(f32([1.0, 2.0]),), (f32([-3.0, 1.0]),)])
def dict_pop_with_default(x):
    stats = {"mean": x.mean(), "max": x.max()}
    if x.sum() > 0:
        stats["sum"] = x.sum()
    else:
        stats["sum"] = -x.sum()
    top = stats.pop("max")
    missing = stats.pop("min", paddle.zeros([]))
    return top, missing, stats


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([-1.0, 0.0, 1.0]),)])
def dict_comprehension_of_tensors(x):
    parts = {f"p{i}": x * i for i in range(3)}
    if parts["p1"].sum() > 0:
        parts["p2"] = parts["p2"] + 10
    return parts


# ---- shapes -----------------------------------------------------------------------------
@case(args=[(rand(2, 3),), (rand(1, 3),)], batch=lambda b: (rand(b, 3),))
def reshape_to_own_shape_aliases(x):
    shape = x.shape
    same = shape
    y = paddle.reshape(x, shape=same)
    rows, cols = x.shape
    if rows > 1:
        y = paddle.reshape(y, [-1, cols * 1])
    return y + rows


@case(args=[(pos(3, 2),), (pos(1, 2),)], batch=lambda b: (pos(b, 2),))
def shape_tensor_in_condition_and_reshape(x):
    n = paddle.shape(x)[0]
    if n > 1:
        x = x * 2
    flat = paddle.reshape(x, [n, -1])
    return flat.sum(axis=1)


@case(args=[(pos(3, 2),), (pos(1, 2),)], batch=lambda b: (pos(b, 2),))
def loops_bounded_by_shape(x):
    total = paddle.zeros([2])
    for i in range(x.shape[0]):
        total = total + x[i]
    j = 0
    while j < x.shape[0]:
        total = total * 0.5
        j += 1
    return total


@case(args=[(rand(2, 6),)], batch=lambda b: (rand(b, 6),))
def shape_changes_after_reshape(x):
    a, b = x.shape
    x = paddle.reshape(x, shape=(-1, 3))
    c, d = x.shape
    return x * (a + c), d + b


@case(args=[(rand(2, 3, 4),), (rand(1, 3, 4),)], batch=lambda b: (rand(b, 3, 4),))
def shape_slice_and_negative_index(x):
    batch, rest = x.shape[0], x.shape[1:]
    y = paddle.reshape(x, [batch, rest[0] * rest[-1]])
    if x.shape[-1] == 4 and batch > 1:
        y = y * 2
    return y, len(x.shape), x.ndim


@case(args=[(rand(2, 4),)], batch=lambda b: (rand(b, 4),))
def creation_sized_by_batch(x):
    """Tensors created with the batch size read from the input, also under a batch unknown
    until run time (`InputSpec([None, 4])`)."""
    z = paddle.zeros([x.shape[0], 3])
    f = paddle.full(shape=paddle.shape(x), fill_value=2.0)
    e = paddle.expand(x.unsqueeze(1), [x.shape[0], 2, x.shape[1]])
    a, b = paddle.split(x, 2, axis=1)
    return z, f * x, e, a + b, paddle.arange(paddle.shape(x)[0])


@case(args=[(rand(3, 4),), (rand(1, 4),)], batch=lambda b: (rand(b, 4),))
def batch_size_condition_and_padding(x):
    n = x.shape[0]
    if n > 2:
        x = x[:2]
    else:
        x = F.pad(x * 10, [0, 0, 0, 2 - n])
    return x, x.sum(axis=0) / x.shape[0]


# ---- len --------------------------------------------------------------------------------
@case(args=[(rand(3, 2),), (rand(1, 2),)], batch=lambda b: (rand(b, 2),))
def len_of_tensor_and_lists(x):
    n = len(x)
    items = [x, x * 2]
    arr = paddle.tensor.create_array("float32")
    for i in range(n):
        paddle.tensor.array_write(x[i], paddle.full([], i, dtype="int64"), array=arr)
    return x * n + len(items), paddle.tensor.array_length(arr)


# ---- slices and item assignment ---------------------------------------------------------
@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([-1.0, 2.0, 3.0]),)])
def list_item_replaced(x):
    items = [x]
    if x[0] > 0:
        items[0] = paddle.full([3], 7.0)
    else:
        items[0] = items[0] * -1
    return items[0]


@case(args=[(rand(4, 5),), (rand(2, 5) + 2,)], batch=lambda b: (rand(b, 5),))
def tensor_slices(x):
    a = x[:, 1:]
    b = x[:, ::-2]
    c = x[-1:, :3]
    d = x[..., 2]
    if d.mean() > 1:
        a = a * 2
    return a, b, c, d


@case(args=[(f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),), (f32([[1.0, 2.0, 3.0], [-40.0, -50.0, -60.0]]),)])
def set_value_by_index_and_slice(x):
    x = paddle.assign(x)
    x[0] = paddle.full([3], 9.0)
    x[:, 1:2] = -x[:, 0:1]
    if x.sum() > 0:
        x[-1, 2] = 0.5
    return x


@case(args=[(rand(2, 3, 4),), (rand(2, 3, 4) + 5,)])
def set_value_third_axis_in_layer_style(x):
    x = x * 1
    y = paddle.full([2, 3], 1.0)
    x[:, :, 2] = y
    if x.mean() > 2:
        x[:, 0, :] = x[:, 1, :] * 2
    return x


@case(args=[(f32([1.0, 2.0, 3.0, 4.0]), 2), (f32([1.0, 2.0, 3.0, 4.0]), 0)])
def set_value_in_loop(x, n):
    out = paddle.zeros([4])
    for i in range(n):
        out[i] = x[i] * 10
    out[n] = -1.0
    return out


@case(args=[(rand(3, 4),), (rand(3, 4) * -1 - 1,)])
def set_value_by_mask_with_gradient_flow(x):
    x.stop_gradient = False
    y = x * 2
    y[y < 0] = 0.0
    loss = y.sum()
    if loss > 0:
        loss = loss * 3
    grad = paddle.grad(loss, x)[0]
    return y, grad


# ---- containers of layers ---------------------------------------------------------------
class ConvBlockSequential(nn.Layer):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2D(2, 3, 3, padding=1), nn.BatchNorm2D(3), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Sequential(("pool", nn.AdaptiveAvgPool2D(1)), ("flat", nn.Flatten()))

    def forward(self, x):
        y = self.body(x)
        if y.mean() > 0.3:
            y = y * 0.5
        return self.head(y)


case(args=[(pos(2, 2, 4, 4) * 5,), (neg(2, 2, 4, 4) * 0.01,)],
     batch=lambda b: (signed(b, 2, 4, 4),))(ConvBlockSequential)


class IndexedLayerList(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(3, 3) for _ in range(3)])

    def forward(self, x, depth):
        for i, block in enumerate(self.blocks):
            if i >= depth:
                break
            x = block(x)
        return self.blocks[-1](x) if x.mean() > 0 else x


case(args=[(pos(2, 3), 3), (pos(2, 3), 1), (neg(2, 3) * 4, 0)])(IndexedLayerList)


@case(args=[(rand(2, 3),)], ref=lambda x: (x, (x + 1, [x * 2])),
      batch=lambda b: (rand(b, 3),))
def nested_tuple_list_output(x):
    return x, (x + 1, [x * 2])


@case(args=[(pos(2, 3),), (neg(2, 3),)],
      ref=lambda x: {"out": np.abs(x), "sign": np.float32(np.sign(x.sum()))})
def dict_output_with_tensor_condition(x):
    if x.sum() > 0:
        sign = paddle.ones([])
        out = x
    else:
        sign = -paddle.ones([])
        out = -x
    return {"out": out, "sign": sign}
