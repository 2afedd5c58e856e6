"""Comprehensions, generator expressions, walrus, match, with, try, isinstance, attributes of
Python objects as loop state, unpacking, globals, f-strings, shapes with unknown dims."""
import contextlib
import dataclasses

import runtime as rt

from .registry import case, f32, f64, neg, pos, rand, signed

SCALE = 3.0
_MODE = "train"


class _State:
    def __init__(self):
        self.count = 0
        self.value = None


class _Tracker:
    """A plain context manager (not a tensor one): records entry and exit."""

    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, *exc):
        self.events.append("exit")
        return False


@case(args=[(pos(2),), (neg(2),)])
def list_comprehension_over_range(x):
    ys = [x * i for i in range(3)]
    s = rt.stack(ys).sum(axis=0)
    return s if rt.mean(s) > 0 else -s


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def comprehension_with_python_filter(x, y):
    ts = [t * (k + 1) for k, t in enumerate([x, y, x + y]) if k != 1]
    if rt.mean(ts[0]) > 0:
        return ts[1]
    return ts[0]


@case(args=[(pos(2),), (neg(2),)], batch=lambda b: (signed(b, 2),))
def generator_expression_sum(x):
    total = sum(x * i for i in range(4))
    if rt.mean(total) > 0:
        total = total / 6
    return total


@case(args=[(pos(2),), (neg(2),)])
def dict_comprehension(x):
    d = {name: x * (i + 1) for i, name in enumerate(["a", "b"])}
    if rt.mean(d["b"]) > 0:
        return d["a"]
    return d["b"]


@case(args=[(pos(3),), (neg(3),)], ref=lambda x: x - x.mean() if x.mean() > 0 else x)
def walrus_in_if(x):
    if (m := rt.mean(x)) > 0:
        return x - m
    return x


@case(args=[(f32([1.0, 1.0]),), (f32([20.0, 1.0]),)])
def walrus_in_while(x):
    while (s := rt.sum(x)) < 10:
        x = x * 2
    return x, s


@case(args=[(neg(2), "relu"), (neg(2), "neg"), (pos(2), "other")])
def match_python_value(x, mode):
    match mode:
        case "relu":
            y = rt.maximum(x, rt.zeros_like(x))
        case "neg":
            y = -x
        case _:
            y = x * 2
    return y


@case(args=[(pos(2), "abs"), (neg(2), "abs"), (neg(2), "id")])
def match_with_tensor_branch(x, mode):
    match mode:
        case "abs":
            if rt.mean(x) < 0:
                x = -x
        case _:
            pass
    return x + 1


@case(args=[(pos(2), (2, 3)), (pos(2), (1,)), (neg(2), (2, 3))])
def match_sequence_pattern(x, shape):
    match shape:
        case (a, b):
            y = x * a + b
        case (a,):
            y = x * a
    if rt.sum(y) > 0:
        y = y - 1
    return y


@case(args=[(pos(2),), (neg(2),)])
def with_plain_context_manager(x):
    tracker = _Tracker()
    with tracker:
        if rt.mean(x) > 0:
            x = x + 1
        else:
            x = x - 1
    return x, len(tracker.events)


@case(args=[(pos(2),), (neg(2),)])
def with_nullcontext_and_no_grad(x):
    with contextlib.nullcontext(), rt.no_grad():
        y = x * 2 if rt.sum(x) > 0 else x
    return y


@case(args=[(pos(2), "scale"), (neg(2), "missing")])
def try_except_key_error(x, key):
    cfg = {"scale": 2.0}
    try:
        s = cfg[key]
    except KeyError:
        s = -1.0
    if rt.mean(x * s) > 0:
        return x * s
    return x


@case(args=[(pos(2),), (neg(2),)])
def try_finally(x):
    events = []
    try:
        y = x * 2 if rt.mean(x) > 0 else -x
    finally:
        events.append("done")
    return y, len(events)


@case(args=[(pos(2), 2), (pos(2), 2.5), (neg(2), 2)])
def isinstance_of_python_arg(x, k):
    if isinstance(k, int):
        x = x * k
    if rt.mean(x) > 0:
        x = x + 1
    return x


@case(args=[(pos(2), neg(2)), (neg(2), 3.0)])
def isinstance_tensor_check(x, y):
    if isinstance(y, rt.Tensor):
        out = x + y
    else:
        out = x * y
    return out if rt.sum(out) > 0 else -out


@case(args=[(f32([1.0]),), (f32([40.0]),)])
def attribute_as_loop_state(x):
    state = _State()
    state.value = x
    while rt.sum(state.value) < 30:
        state.value = state.value * 2
        state.count += 1
    return state.value, state.count


@case(args=[(pos(2),), (neg(2),)])
def attribute_set_in_branch(x):
    state = _State()
    if rt.mean(x) > 0:
        state.value = x * 2
    else:
        state.value = x - 1
    return state.value


@case(args=[(pos(3),), (neg(3),)])
def augmented_assign_subscript(x):
    x = x.clone()
    if rt.mean(x) > 0:
        x[0] += 10
    else:
        x[1] *= 3
    return x


@case(args=[(pos(2), neg(2)), (neg(2), pos(2))])
def starred_unpacking(x, y):
    first, *rest = [x, y, x * y]
    if rt.mean(first) > 0:
        return rest[0] + rest[1]
    return first


@case(args=[(pos(2),), (neg(2),)])
def global_constant(x):
    if rt.sum(x) > 0:
        return x * SCALE
    return x / SCALE


@case(args=[(pos(2), 1), (neg(2), 2)])
def fstring_of_python_values(x, k):
    tag = f"layer_{k}"
    if tag.endswith("1") and rt.mean(x) > 0:
        return x + k
    return x - k


@case(args=[(pos(4, 3),), (neg(4, 3),)], batch=lambda b: (rand(b, 3),))
def reshape_with_unknown_batch(x):
    b = x.shape[0]
    y = x.reshape([b, -1, 1])
    return y.sum(axis=1) / x.shape[1] if rt.mean(x) > 0 else y.mean(axis=1)


@case(args=[(pos(2),), (neg(2),)])
def swap_by_tuple_assignment(x):
    a, b = x, x * 2
    if rt.mean(x) > 0:
        a, b = b, a
    return a - b


@case(args=[(pos(2), 3), (neg(2), 0)])
def tuple_of_python_and_tensor(x, n):
    pair = (x, n)
    t, k = pair
    if rt.mean(t) > 0:
        return t * k
    return t


@case(args=[(pos(3, 2),), (neg(3, 2),)], batch=lambda b: (signed(b, 2),))
def shape_tensor_arithmetic(x):
    n = rt.shape(x)[0]
    scale = n.astype("float32") + 1
    if rt.mean(x) > 0:
        return x.sum(axis=0) / scale
    return x.sum(axis=0) * scale


@case(args=[(pos(2),), (neg(2),)])
def chained_assignment_in_branch(x):
    if rt.mean(x) > 0:
        a = b = x * 2
    else:
        a = b = x - 1
    return a + b


@case(args=[(pos(2),), (neg(2),)])
def del_in_branch(x):
    if rt.mean(x) > 0:
        tmp = x * 2
        x = x + tmp
        del tmp
    else:
        x = x - 1
    return x


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, -2.0, -3.0]),)])
def mask_setitem_in_branch(x):
    x = x.clone()
    if rt.any(x > 0):
        x[x < 0] = 0.0
    else:
        x = -x
    return x


@case(args=[(pos(2), "scale"), (neg(2), "scale"), (pos(2), "missing")])
def try_inside_loop(x, key):
    cfg = {"scale": 2.0}
    for _ in range(2):
        try:
            s = cfg[key]
        except KeyError:
            s = 1.0
        if rt.mean(x) > 0:
            x = x * s
    return x


@case(args=[(pos(2, 3),), (f64([[1.0, -2.0]]),), (neg(2, 3),)])
def dtype_and_ndim_conditions(x):
    if x.dtype == "float32" and x.ndim == 2:
        y = x.sum(axis=1)
    else:
        y = x.astype("float32").sum(axis=1)
    return y if rt.mean(y) > 0 else -y


@dataclasses.dataclass
class _Config:
    depth: int = 2
    scale: float = 0.5

    @property
    def gain(self):
        return self.scale * 4


@case(args=[(pos(2),), (neg(2),)])
def dataclass_config_and_property(x):
    cfg = _Config()
    for _ in range(cfg.depth):
        if rt.mean(x) > 0:
            x = x * cfg.gain
        else:
            x = x + cfg.scale
    return x


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def tensor_ifexp_in_comprehension(x, y):
    ys = [t * 2 if rt.mean(t) > 0 else -t for t in [x, y]]
    return rt.stack(ys)


@case(args=[(pos(2), neg(2)), (pos(2), pos(2))])
def tensor_lambda_in_map(x, y):
    ys = list(map(lambda t: t if rt.sum(t) > 0 else -t * 3, [x, y]))  # noqa: C417
    return ys[0] + ys[1]


@case(args=[(pos(2),), (neg(2),)])
def lambdas_with_default_capture(x):
    fs = [lambda t, k=k: t * (k + 1) for k in range(3)]
    out = rt.zeros([2])
    for f in fs:
        y = f(x)
        out = out + y if rt.mean(y) > 0 else out - 1
    return out


@case(args=[(pos(2, 2),), (pos(2, 3),), (neg(2, 2),)])
def shape_list_comparison(x):
    if x.shape == [2, 2] and rt.mean(x) > 0:
        return x.sum(axis=1)
    return x.sum(axis=0)


@case(args=[(pos(2),), (neg(2),)])
def return_inside_try_in_branch(x):
    if rt.mean(x) > 0:
        try:
            return x * 2
        except ValueError:
            return x
    return x - 3


@case(args=[(pos(2),), (neg(2),)])
def global_statement_write(x):
    global _MODE
    _MODE = "eval"
    if rt.mean(x) > 0 and _MODE == "eval":
        return x * SCALE
    return x - SCALE


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def reversed_and_enumerate_start(x, y):
    out = rt.zeros([2])
    for k, t in enumerate(reversed([x, y]), start=1):
        if rt.mean(t) > 0:
            out = out + t * k
    return out


@case(args=[(pos(4, 2),), (neg(6, 2),)], batch=lambda b: (signed(b, 2),))
def slice_half_batch(x):
    head = x[: x.shape[0] // 2 + 1]
    if rt.mean(head) > 0:
        return head.sum(axis=0)
    return head.mean(axis=0)


@case(args=[(pos(3, 2),), (neg(3, 2),)], batch=lambda b: (signed(b, 2),))
def arange_over_batch(x):
    w = rt.arange(x.shape[0]).astype("float32")
    y = (x * w.unsqueeze(1)).sum(axis=0)
    return y if rt.sum(y) > 0 else -y


@case(args=[(pos(3, 2),), (f32([[1.0, 1.0], [-5.0, -5.0]]),)], batch=lambda b: (signed(b, 2),))
def last_row_by_index(x):
    last = x[-1]
    also_last = x[x.shape[0] - 1]
    if last.sum() > 0:
        return last + also_last
    return last - also_last


@case(args=[(pos(3, 4),), (neg(3, 4),)], batch=lambda b: (signed(b, 4),))
def numel_from_shape_product(x):
    numel = x.shape[0] * x.shape[1]
    mean = x.sum() / numel
    return x - mean if mean > 0 else x + mean
