"""The Python a tracer's own reference tests throw at it (the idioms of PyTorch Dynamo's
test_functions / test_misc / test_repros / test_list / test_dicts / test_sets / test_generator /
test_exceptions, written anew for `rt`): closures and `nonlocal`, `*args` / `**kwargs`,
dataclasses and namedtuples, dict / set / list methods, itertools, functools (`partial`,
`reduce`, `lru_cache`), enumerate / zip / reversed / sorted, isinstance checks, try/except,
generators, branches on `x.sum() > 0`, `.item()`, `tolist()`, shape arithmetic, the math and
operator modules and string formatting. Every case mixes the Python idiom with a decision the
input makes, so one converted program meets several paths."""
import collections
import dataclasses
import functools
import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

import runtime as rt
from runtime import nn

from .registry import case, f32, i64, neg, pos

_P = f32([[0.5, 1.0], [1.5, 2.0]])
_N = -_P


# ---- closures, nonlocal, *args / **kwargs ----------------------------------------------------
@case(args=[(_P,), (_N,)])
def closure_nonlocal_accumulator(x):
    """An inner function that updates two names of its parent with `nonlocal`: a tensor and a
    Python count, called under a branch the input decides."""
    total = rt.zeros([2])
    calls = 0

    def add(row):
        nonlocal total, calls
        total = total + row
        calls += 1

    for row in x:
        add(row)
    if total.sum() > 0:
        add(total)
    return total, calls


def _blend(*tensors, weight=0.5, **extra):
    out = tensors[0] * weight
    for t in tensors[1:]:
        out = out + t * (1 - weight)
    if "bias" in extra:
        out = out + extra["bias"]
    return out


@case(args=[(_P, f32([1.0, 2.0])), (_N, f32([1.0, 2.0]))])
def star_args_and_kwargs(x, b):
    """A helper taking `*tensors` and `**extra`, called with a spread list and a spread dict
    whose contents a tensor branch chose."""
    parts = [x[0], x[1], b]
    if x.mean() > 0:
        opts = {"weight": 0.25, "bias": 1.0}
    else:
        opts = {"weight": 0.75}
    return _blend(*parts, **opts)


def _make_scaler(factor):
    def scale(t):
        return t * factor if t.sum() > 0 else t / factor
    return scale


@case(args=[(_P,), (_N,)])
def closure_factory_with_branch(x):
    """A factory returns a closure over a Python number; the closure branches on its input."""
    double, halve = _make_scaler(2.0), _make_scaler(0.5)
    return double(x) + halve(x[0])


@case(args=[(_P,), (_N,)])
def lambda_table(x):
    """A dict of lambdas picked by a Python key; the result decides a second lambda."""
    ops = {"sq": lambda t: t * t, "neg": lambda t: -t, "shift": lambda t: t + 3.0}
    y = ops["sq"](x)
    key = "neg" if x.sum() < 0 else "shift"
    return ops["shift"](y) if key == "shift" else y


# ---- dataclasses and namedtuples ------------------------------------------------------------
@dataclasses.dataclass
class _Cfg:
    scale: float = 1.0
    clip: float = 3.0
    use_bias: bool = True


@case(args=[(_P, _Cfg()), (_N, _Cfg(scale=2.0, use_bias=False))])
def dataclass_config_fields(x, cfg):
    """Fields of a dataclass passed in, `dataclasses.replace` and `asdict`."""
    cfg2 = dataclasses.replace(cfg, clip=cfg.clip / 2)
    y = rt.clip(x * cfg2.scale, -cfg2.clip, cfg2.clip)
    if cfg2.use_bias and y.sum() > 0:
        y = y + len(dataclasses.asdict(cfg2))
    return y


class _Span(NamedTuple):
    lo: rt.Tensor
    hi: rt.Tensor


@case(args=[(_P,), (f32([[3.0, -1.0], [0.0, 2.0]]),)])
def namedtuple_replace_under_branch(x):
    """A NamedTuple of tensors whose field `_replace` swaps under a tensor condition."""
    span = _Span(x.min(), x.max())
    if span.lo < 0:
        span = span._replace(lo=rt.zeros([]))
    return span.hi - span.lo, span


_Pair = collections.namedtuple("_Pair", ["a", "b"])


@case(args=[(_P,), (_N,)])
def namedtuple_unpack_and_index(x):
    """collections.namedtuple built, indexed by position and name, unpacked."""
    p = _Pair(x.sum(), x.mean())
    first, second = p
    if p[0] > p.b:
        return first - second, p._fields[0]
    return second - first, p._fields[1]


# ---- dict methods ---------------------------------------------------------------------------
@case(args=[(_P,), (_N * 3,)])
def dict_get_pop_update_setdefault(x):
    """get with a default, pop, update, setdefault and len, then a tensor branch over an
    item."""
    d = {"a": x + 1, "b": x * 2}
    v = d.pop("b") + d.get("a") + d.get("zz", 3.0)
    d.update({"c": v})
    d.setdefault("a", x)
    d.setdefault("e", 7)
    if "c" in d and "q" not in d:
        v = v + len(d)
    if d["c"].mean() > 0:
        d["c"] = d["c"] - d["e"]
    return d


@case(args=[(_P,), (_N,)])
def dict_items_keys_values_loops(x):
    """Loops over items / keys / values of a dict of tensors, and sorted keys."""
    feats = {"w": x[0], "v": x[1], "u": x.sum(0)}
    acc = rt.zeros([2])
    for k, t in feats.items():
        acc = acc + t * len(k)
    names = sorted(feats)
    best = max(feats.values(), key=lambda t: float(t.sum()))
    if best.sum() > 0:
        acc = acc * 2
    return acc, names, best


@case(args=[(_P,), (_N,)])
def defaultdict_and_counter(x):
    """Grouping tensors by Python keys in a defaultdict(list), and a Counter of strs."""
    groups = collections.defaultdict(list)
    tags = ["even", "odd", "even", "odd"]
    for i, tag in enumerate(tags):
        groups[tag].append(x.flatten()[i])
    counts = collections.Counter(tags)
    out = {k: rt.stack(v).sum() * counts[k] for k, v in groups.items()}
    if out["even"] > out["odd"]:
        out["winner"] = out["even"]
    else:
        out["winner"] = out["odd"]
    return out


@case(args=[(_P,), (_N,)])
def dict_from_zip_and_fromkeys(x):
    """dict(zip(...)), dict.fromkeys and an OrderedDict's move_to_end."""
    d = dict(zip(["p", "q"], [x[0], x[1]]))
    z = dict.fromkeys(["p", "q"], 0.0)
    od = collections.OrderedDict(d)
    od.move_to_end("p")
    out = list(od.values())[0] + z["p"]
    return out if out.sum() > 0 else out * 10, list(od)


# ---- set and list methods --------------------------------------------------------------------
@case(args=[(_P, ("relu", "norm")), (_N, ("gelu",))])
def set_membership_of_options(x, flags):
    """A set of option strs built from a tuple, unions, membership, then a tensor branch."""
    active = set(flags) | {"base"}
    active.discard("unused")
    y = x
    if "relu" in active:
        y = rt.maximum(y, rt.zeros_like(y))
    if {"norm", "base"} <= active:
        y = y / (y.abs().max() + 1.0)
    return y if y.sum() >= 0 else -y, len(active)


@case(args=[(_P,), (_N,)])
def list_methods_of_tensors(x):
    """append, extend, insert, pop(i), reverse and index of a Python list of tensors."""
    items = [x[0]]
    items.append(x[1])
    items.extend([x[0] + 1, x[1] + 1])
    items.insert(0, x.sum(0))
    last = items.pop()
    items.pop(1)
    items.reverse()
    y = rt.stack(items).sum(0) + last
    return y if y.mean() > 0 else y * 0.5, len(items)


@case(args=[(_P,), (_N,)])
def tuple_concat_slice_and_multiply(x):
    """Tuples concatenated, repeated and sliced; a starred unpack."""
    a = (x[0], x[1])
    b = a + (x.sum(0),)
    c = (b * 2)[1:4]
    head, *rest = c
    out = head + sum(rest)
    if out.max() > 2:
        return out, len(rest)
    return -out, len(rest)


@case(args=[(_P,), (_N,)])
def python_list_of_numbers_sorted(x):
    """A list of Python floats from `.item()`, sorted, reversed and summed."""
    vals = [x[i].sum().item() for i in range(2)]
    vals.append(x.mean().item())
    ordered = sorted(vals, reverse=True)
    top = ordered[0]
    if top > 0:
        return x * top, ordered
    return x - top, list(reversed(ordered))


# ---- itertools and functools -----------------------------------------------------------------
@case(args=[(_P,), (_N,)])
def itertools_product_pairs(x):
    """itertools.product over index ranges picks entries of a tensor."""
    acc = x[0, 0] * 0
    for i, j in itertools.product(range(2), range(2)):
        if i != j:
            acc = acc + x[i, j]
    return acc if acc > 0 else acc - 1


@case(args=[(_P,), (_N,)])
def itertools_chain_and_accumulate(x):
    """chain of two lists of tensors, accumulate of their running sum, islice."""
    a = [x[0], x[1]]
    b = [x.sum(0)]
    running = list(itertools.accumulate(itertools.chain(a, b)))
    firsts = list(itertools.islice(running, 2))
    out = running[-1] - firsts[0]
    return out if out.sum() > 0 else out.abs()


@case(args=[(_P,), (_N,)])
def itertools_pairwise_differences(x):
    """Differences of consecutive rows with zip(rows, rows[1:]) and pairwise."""
    rows = [x[0], x[1], x[0] * 2]
    diffs = [b - a for a, b in zip(rows, rows[1:])]
    pw = [b - a for a, b in itertools.pairwise(rows)]
    s = sum(d.sum() for d in diffs) + sum(p.sum() for p in pw)
    if s > 0:
        return s, True
    return -s, False


def _affine(x, w, b=0.0):
    return x * w + b


@case(args=[(_P,), (_N,)])
def functools_partial_and_reduce(x):
    """functools.partial of a helper, reduce with operator.add and operator.mul."""
    up = functools.partial(_affine, w=2.0)
    down = functools.partial(_affine, w=0.5, b=-1.0)
    parts = [up(x[0]), down(x[1]), x.sum(0)]
    total = functools.reduce(operator.add, parts)
    prod = functools.reduce(operator.mul, parts, 1.0)
    return total if total.sum() > 0 else prod


@functools.lru_cache(maxsize=None)
def _window(n):
    return tuple(math.cos(math.pi * k / n) for k in range(n))


@case(args=[(_P,), (_N,)])
def lru_cached_python_helper(x):
    """An lru_cache'd helper of Python numbers makes a window applied to a tensor."""
    w = rt.to_tensor(list(_window(x.shape[1])), dtype="float32")
    y = x * w
    return y.sum() if y.mean() > 0 else y.max()


# ---- enumerate / zip / reversed / sorted ------------------------------------------------------
@case(args=[(_P, [1.0, -1.0]), (_N, [0.5, 2.0])])
def enumerate_zip_reversed(x, weights):
    """enumerate with a start, zip with reversed Python weights, a tensor branch per step."""
    out = rt.zeros([2])
    for i, (row, w) in enumerate(zip(x, reversed(weights)), start=1):
        if row.sum() > 0:
            out = out + row * w * i
        else:
            out = out - row
    return out


@case(args=[(f32([3.0, 1.0, 2.0]),), (f32([-3.0, -1.0, 5.0]),)])
def sorted_by_computed_key(x):
    """A list of (name, tensor) pairs sorted by a key the input computes."""
    pairs = [("a", x[0]), ("b", x[1]), ("c", x[2])]
    ranked = sorted(pairs, key=lambda p: float(p[1]))
    names = [n for n, _ in ranked]
    spread = ranked[-1][1] - ranked[0][1]
    if ranked[0][1] < 0:
        spread = spread * 2
    return names, spread


# ---- isinstance and types ----------------------------------------------------------------------
def _as_tensor(v):
    if isinstance(v, rt.Tensor):
        return v
    if isinstance(v, (list, tuple)):
        return rt.to_tensor(v, dtype="float32")
    return rt.full([2], float(v))


@case(args=[(_P, 2.0), (_N, [1.0, 2.0]), (_P, 3)])
def isinstance_dispatch(x, other):
    """A helper dispatching on isinstance of a number, a list or a tensor."""
    o = _as_tensor(other)
    y = x[0] + _as_tensor(o)
    if isinstance(other, int) and not isinstance(other, bool):
        y = y * other
    return y if y.sum() > 0 else -y


class _Doubler:
    """A plain class whose instances are called like a function."""

    def __init__(self, k):
        self.k = k

    def __call__(self, t):
        if t.mean() > 0:
            return t * self.k
        return t


@case(args=[(_P,), (_N,)])
def callable_plain_object(x):
    """A plain object with __call__ that branches on a tensor."""
    f = _Doubler(3.0)
    return f(x) + f(x[0]), callable(f)


# ---- try / except / finally -------------------------------------------------------------------
@case(args=[(_P, "a"), (_N, "z")])
def try_except_keyerror_python(x, key):
    """A Python KeyError caught, the fallback decided by the input's sign."""
    table = {"a": 1.0, "b": 2.0}
    try:
        w = table[key]
    except KeyError:
        w = -1.0
    y = x * w
    return y if y.sum() > 0 else y * 0


@case(args=[(_P,), (_N,)])
def try_finally_records(x):
    """A finally block appends to a log on every path; the try returns a value chosen by a
    tensor branch."""
    log = []

    def run(t):
        try:
            if t.sum() > 0:
                return t + 1
            return t - 1
        finally:
            log.append("done")

    return run(x), log


@case(args=[(_P,), (f32([[1.0, 2.0], [3.0, 0.0]]),)])
def try_except_zero_division_python(x):
    """A ZeroDivisionError from Python arithmetic on a shape-derived count."""
    zeros = int((x == 0).sum())
    try:
        ratio = x.shape[0] / zeros
    except ZeroDivisionError:
        ratio = 0.0
    return x * ratio, ratio


# ---- generators ---------------------------------------------------------------------------------
def _scaled_rows(x, k):
    for row in x:
        yield row * k


@case(args=[(_P,), (_N,)])
def generator_function_consumed(x):
    """A generator function consumed by sum() and list()."""
    total = sum(_scaled_rows(x, 2.0))
    rows = list(_scaled_rows(x, 0.5))
    if total.sum() > 0:
        return total, len(rows)
    return rows[0], len(rows)


@case(args=[(_P,), (_N,), (f32([[1.0, -1.0], [-1.0, 1.0]]),)])
def any_all_over_generators(x):
    """any() / all() of tensor comparisons in generator expressions."""
    if all(row.sum() > 0 for row in x):
        return x + 1
    if any(row.max() > 0 for row in x):
        return x * 0
    return x - 1


def _countdown(n):
    while n > 0:
        yield n
        n -= 1


@case(args=[(_P, 3), (_N, 2)])
def generator_with_python_state(x, n):
    """A generator of Python ints driving a loop over a tensor; next() with a default."""
    it = _countdown(n)
    first = next(it)
    y = x * first
    for k in it:
        y = y + k if y.mean() > 0 else y - k
    return y, next(it, -1)


# ---- data-dependent branches, .item(), tolist(), shape math --------------------------------------
@case(args=[(_P,), (_N,)])
def branch_on_sum_returns_different_ops(x):
    """The basic Dynamo graph break: a branch on `x.sum() > 0`."""
    if x.sum() > 0:
        return x.sin() * 2
    return x.cos() - 1


@case(args=[(_P,), (f32([[0.1, 0.2], [0.1, 0.1]]),)])
def item_scalar_math(x):
    """`.item()` turns a reduction into a Python float used in Python math."""
    s = x.sum().item()
    scale = math.sqrt(abs(s)) + 1
    if s > 1.0:
        return x * scale, round(s, 3)
    return x / scale, round(s, 3)


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, -2.0, -3.0]),)])
def tolist_filter_in_python(x):
    """tolist() of an argument, a Python filter and sum over its numbers."""
    vals = x.tolist()
    positives = [v for v in vals if v > 0]
    return sum(positives), len(positives)


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]),),
            (f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),)])
def shape_arithmetic_halves(x):
    """`x.shape[0] // 2` and `% 2` decide slicing (a Python path per shape)."""
    n = x.shape[0]
    half = n // 2
    if n % 2 == 0:
        return x[:half] - x[half:]
    return x[:half] + x[half + 1:], x[half]


@case(args=[(pos(2, 4),), (neg(2, 4),)])
def math_module_on_shapes(x):
    """Attention-style scaling with math.sqrt of a dim, math.log, math.pi and math.floor."""
    d = x.shape[-1]
    scores = x @ x.t() / math.sqrt(d)
    bias = math.log(d) - math.floor(math.pi)
    if x.mean() * math.sqrt(d) > bias:
        return scores - bias
    return scores


@case(args=[(_P,), (_N,)])
def operator_module_calls(x):
    """operator.itemgetter / attrgetter / methodcaller / truediv on tensors."""
    first = operator.itemgetter(0)(x)
    shape = operator.attrgetter("shape")(x)
    total = operator.methodcaller("sum")(x)
    y = operator.truediv(first, shape[0])
    return operator.neg(y) if operator.lt(total, 0) else y


@case(args=[(_P, "enc"), (_N, "dec")])
def string_formatting_keys(x, prefix):
    """f-strings, % and str.format build dict keys; a tensor branch chooses which to fill."""
    out = {}
    for i in range(x.shape[0]):
        out[f"{prefix}_{i}"] = x[i]
    tag = "%s-%d" % (prefix, len(out))
    name = "{}:{}".format(tag, "pos" if prefix == "enc" else "neg")
    if x.sum() > 0:
        out["sum"] = x.sum()
    else:
        out["sum"] = -x.sum()
    return out, name, "_".join(sorted(out))


# ---- loops ------------------------------------------------------------------------------------
@case(args=[(f32([4.0, 3.0]),), (f32([0.1, 0.2]),)])
def while_norm_halving(x):
    """A tensor `while` halves until the norm is small; a Python count of steps."""
    steps = 0
    while x.norm() > 1.0:
        x = x / 2
        steps += 1
    return x, steps


@case(args=[(f32([[1.0, 2.0], [-1.0, 5.0], [3.0, 3.0]]),), (pos(3, 2),)])
def for_rows_break_first_negative(x):
    """A for over rows breaking at the first row with a negative entry."""
    acc = rt.zeros([2])
    for row in x:
        if row.min() < 0:
            break
        acc = acc + row
    return acc


@case(args=[(_P,), (_N,)])
def walrus_in_condition(x):
    """An assignment expression inside a tensor condition."""
    if (s := x.sum()) > 0:
        return x / s
    return x * s


@case(args=[(f32([0.2, 0.4]),), (f32([2.0, 4.0]),), (f32([-2.0, -4.0]),)])
def chained_comparison_on_tensor(x):
    """A chained comparison `0 < m < 1` on a tensor mean."""
    m = x.mean()
    if 0 < m < 1:
        return x * 10
    return x


@case(args=[(_P, 3), (_N, 4)])
def recursion_on_python_int(x, n):
    """A recursive helper over a Python int building nested tensor math."""
    def power(t, k):
        if k == 0:
            return rt.ones_like(t)
        return t * power(t, k - 1)

    y = power(x, n)
    return y if y.sum() > 0 else y.abs()


@case(args=[(_P,), (_N,)])
def abs_round_divmod_minmax_of_items(x):
    """Python builtins of numbers made by `.item()`: abs, round, divmod, min, max."""
    a = x.sum().item()
    b = x.max().item()
    q, r = divmod(int(abs(a) * 10), 3)
    lo, hi = min(a, b), max(a, b)
    if a > 0:
        return round(hi - lo, 4), q, r
    return round(lo, 4), r, q


@case(args=[(_P,), (_N,)])
def bool_and_int_casts_returned(x):
    """bool() / int() / float() of reductions returned as Python values."""
    positive = bool(x.sum() > 0)
    idx = int(x.flatten().argmax())
    peak = float(x.max())
    if positive:
        peak = peak * 2
    return positive, idx, peak


# ---- context managers ---------------------------------------------------------------------------
class _Tracker:
    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, *exc):
        self.events.append("exit")
        return False


@case(args=[(_P,), (_N,)])
def with_plain_context_manager(x):
    """A user context manager around a tensor branch, and no_grad inside."""
    tr = _Tracker()
    with tr:
        with rt.no_grad():
            y = x * 2
        if y.sum() > 0:
            y = y - 1
    return y, tr.events


# ---- comprehensions -----------------------------------------------------------------------------
@case(args=[(_P,), (_N,)])
def dict_and_set_comprehensions(x):
    """A dict comprehension of tensors and a set comprehension of Python ints."""
    d = {f"r{i}": x[i] * (i + 1) for i in range(x.shape[0])}
    sizes = {len(k) for k in d}
    total = sum(d.values())
    return total if total.sum() > 0 else -total, sorted(sizes)


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, -2.0, -3.0]),)])
def comprehension_filter_by_tensor(x):
    """A list comprehension keeping the elements a tensor condition selects: the list's
    length is decided by the input."""
    kept = [v for v in x if v > 0]
    return len(kept), sum(kept) if kept else 0.0


@case(args=[(f32([0.1, 0.9, 0.3]),), (f32([0.8, 0.1, 0.05]),)])
def argmax_picks_python_label(x):
    """`int(argmax)` indexes a Python list of labels."""
    labels = ["cat", "dog", "bird"]
    if x.max() > 0.85:
        return labels[int(x.argmax())].upper()
    return labels[int(x.argmax())]


@case(args=[(f32([1.0, 2.0, 2.0, 3.0]),), (f32([1.0, 1.0, 1.0, 1.0]),)])
def set_of_tolist_values(x):
    """A set of Python numbers from tolist(): the count of distinct values."""
    distinct = set(x.tolist())
    if len(distinct) > 1:
        return len(distinct), max(distinct)
    return 1, min(distinct)


# ---- Layers -------------------------------------------------------------------------------------
class _GatedStack(nn.Layer):
    """A LayerList iterated with enumerate; a residual applied when a block's output mean is
    positive, and a Python counter on self."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(2, 2) for _ in range(3)])
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        for i, blk in enumerate(self.blocks):
            h = blk(x)
            if h.mean() > 0:
                x = x + h / (i + 1)
            else:
                x = h
        return x


case(args=[(_P,), (_N * 3,)])(_GatedStack)


class _Heads(nn.Layer):
    """A LayerDict of heads chosen by a Python str argument and a tensor condition."""

    def __init__(self):
        super().__init__()
        self.heads = nn.LayerDict({"cls": nn.Linear(2, 3), "reg": nn.Linear(2, 1)})

    def forward(self, x, task="cls"):
        out = self.heads[task](x)
        if out.sum() > 0:
            out = out * 2
        return {task: out, "n_heads": len(self.heads)}


case(args=[(_P, "cls"), (_N, "reg"), (_N, "cls")])(_Heads)


class _Stateful(nn.Layer):
    """A Layer whose forward keeps a Python list attribute of step strs (Dynamo's mutation of
    module attributes)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.mode = "train"

    def forward(self, x):
        h = self.lin(x)
        self.mode = "big" if h.abs().max() > 1 else "small"
        return h, self.mode


case(args=[(_P * 4,), (_P * 0.01,)])(_Stateful)


# ---- globals and module constants ---------------------------------------------------------------
_SCALES = {"small": 0.5, "large": 2.0}
_THRESH = 0.0


@case(args=[(_P, "small"), (_N, "large")])
def module_constants_and_global_dict(x, size):
    """A module-level dict and threshold read by the function."""
    y = x * _SCALES[size]
    if y.mean() > _THRESH:
        return y
    return y * _SCALES["small"]


@case(args=[(i64([3, 1, 2]),), (i64([0, 5, 1]),)])
def int_tensor_item_indexing(x):
    """An int64 tensor's items used as Python indices into a range and a list."""
    seq = list(range(10))
    a, b = int(x[0]), int(x[1])
    window = seq[a:a + b]
    if b > a:
        window = window[::-1]
    return len(window), sum(window), window[0] if window else -1


# ---- more of the repros: computed loop counts, math predicates, list equality -----------------
@case(args=[(f32([0.5, 2.5]),), (f32([0.1, 0.2]),)])
def range_of_ceil_item(x):
    """`range(math.ceil(x.max().item()))`: a loop count computed from the input."""
    n = math.ceil(x.max().item())
    y = x
    for i in range(n):
        y = y + i
    return y, n


@case(args=[(f32([1.0, -1.0]),), (f32([1.0, 2.0]),)])
def math_isclose_and_isfinite(x):
    """math.isclose / math.isfinite of `.item()` values deciding the result."""
    s = x.sum().item()
    if math.isclose(s, 0.0, abs_tol=1e-6):
        return x * 0, "balanced"
    if math.isfinite(s) and s > 0:
        return x / s, "positive"
    return x, "other"


@case(args=[(f32([1.0, 2.0]),), (f32([2.0, 1.0]),)])
def tolist_equality(x):
    """`x.tolist() == [...]` and a tuple comparison of items."""
    if x.tolist() == [1.0, 2.0]:
        return x + 10, True
    return x - 10, tuple(x.tolist()) < (1.5, 0.0)


@case(args=[(_P,), (f32([[3.0, 1.0], [1.0, 1.0]]),)])
def reduce_with_tensor_ternary(x):
    """functools.reduce with a lambda choosing the larger row by a tensor comparison."""
    rows = [x[0], x[1], x[0] * -1]
    return functools.reduce(lambda a, b: a if a.sum() > b.sum() else b, rows)


def _positive_rows(x):
    for row in x:
        if row.sum() > 0:
            yield row


@case(args=[(_P,), (f32([[1.0, 1.0], [-1.0, -2.0]]),)])
def generator_conditional_yield(x):
    """A generator yielding under a tensor condition: how many it yields is the input's."""
    kept = list(_positive_rows(x))
    return len(kept), rt.stack(kept).sum(0) if kept else rt.zeros([2])


@dataclasses.dataclass
class _RunState:
    total: float = 0.0
    steps: int = 0


@case(args=[(_P,), (_N,)])
def dataclass_state_mutated_under_branch(x):
    """A dataclass made inside, its fields set under a tensor `if` (a float becomes a
    reduction's `.item()`), returned as fields."""
    st = _RunState()
    for row in x:
        st.steps += 1
        if row.sum() > 0:
            st.total += row.sum().item()
    return st.total, st.steps
