"""Generated functions for the classes of issue 35 (what eager runs, converted code runs): Python
flags set by `for ... else` / `while ... else` around a tensor `break` (a walrus in the `while`
test, read after the loop); lists whose length a tensor `if` (with or without `else`) decides,
read after it or returned; Python numbers and loop counters appended to lists that graph loops
grow (a counter into a list of float tensors); a loop counter used where eager code has a
Python int (a pad width and value, randint bounds, `range(i)`, a slice bound, a shape, a roll
shift, an index list, a split's number of parts or sections, a pool's kernel, adaptive size or
padding (1-D to 3-D), `math` of it); comprehensions with two `for`s over lists graph loops
grow; a name (a tensor, a list, a dict) changed in place, then rebound in a graph loop's body;
dict entries and attributes changed in graph loops (an attribute a loop makes a tensor:
`o.total = 0`, then a tensor); a namedtuple and a dataclass rebound in the branches of a tensor
`if`; a method of a plain object and a Layer's forward that set a field / reassign a registered
buffer under a tensor `if`; a dict key first set in a graph loop or a branch; `del` of a name
in one branch; a `with` block that returns under a tensor condition; state on the argument
object written every call (`o.calls += 1`, `o.warm = True`, `o.log.append(...)`), which must
not make every call trace again; a comprehension over `range()` of a tensor, `rt.clip` with
tensor bounds, `round(float(t), 1)`, a branch a Python part of the test prunes, `sorted` and
`==` of lists of tensors, `tolist()` of an argument, a string appended under a tensor `if`.

`programs()` is a hypothesis strategy of `(source, inputs)`: `source` defines `f(x, y, o)`
(x, y: float32 [3]; `o` made by `make_state`, compared after each call); `inputs` are
several (x, y) pairs of different signs, so tensor conditions and trip counts (zero
included) differ between the calls of one converted function.
"""
from __future__ import annotations

from hypothesis import strategies as st

import runtime as rt

from .gen_state import VECTOR, indent

PRELUDE = '''\
import collections
import contextlib
import dataclasses
import math

Pair = collections.namedtuple("Pair", "low high")
Span = dataclasses.make_dataclass("Span", ["lo", "n"])


def f(x, y, o):
    h = x * 1.0
    out = [y]
    nums = [0.5]
    stats = {"n": rt.zeros([])}
    p = Pair(x, y)
    q = Span(y, 1)
'''

RESULT = "h, len(out), len(nums), stats['n'], p.low + p.high, q.lo, q.n"
RESULT_WITH_LIST = "h, out, len(nums), stats['n'], p.low + p.high, q.lo, q.n"

TENSOR_CONDS = ("rt.mean(x) > 0.0", "rt.sum(h) > 1.0", "y[0] > x[1]", "x[2] < 0.5")
TRIPS = "rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), 'int64')"  # 0..3 trips
TRIPS_1 = "rt.cast(rt.clip(y[1] + 2.0, 1.0, 3.0), 'int64')"  # 1..3 trips
NUMBERS = ("0.5", "1.5", "-0.25")

ANYWHERE = (
    "h = h + 1.0",
    "h = h * 0.5 + y",
    "out.append(h * 0.5)",
    "nums.append({n})",
    "h = h + len(nums)",
    "h = h + len(out)",
    'stats["n"] = stats["n"] + rt.mean(h)',
    "o.calls += 1",
    "p = Pair(p.low * 0.5, p.high + h)",
    "q = Span(q.lo * 0.5 + h, q.n + 1)",
    "o.tracker.update(h)\nh = h + o.tracker.best * 0.5",
    "h = o.cached(h)",
    # a key first set here: inside a graph loop or one branch of a tensor if, it gets a
    # presence flag (`.get` takes the default where no trip or branch set it)
    'stats["m"] = rt.mean(h)\nh = h + stats.get("m", 0.0)',
    # a comprehension over range() of a tensor, tensor clip bounds, round() of a number made
    # from a tensor, a branch a Python part of the test prunes, sorted / == of tensors,
    # tolist() of an argument, a string appended under a tensor `if` (an array of str ids)
    f"h = h + rt.stack([h * j for j in range({TRIPS})] + [h]).sum(0) * 0.1",
    "h = rt.clip(h, y.min(), y.max() + 1.0)",
    "h = h + round(float(h.sum()), 1)",
    "if rt.sum(h) > 0.0 and len(nums) > 99:\n    h = h + nums[99]",
    "h = h + sorted([h[0], h[1], h[2]])[0] + float([h[0], h[1]] == [h[1], h[0]])",
    "h = h + rt.to_tensor(x.tolist()) * 0.5",
    'words = ["w"]\nif rt.sum(h) > 0.0:\n    words.append("v")\nh = h + len(words)',
    # two `for`s, one over a list that graph loops may have made a tensor array
    "h = h + rt.stack([t * s for t in out for s in (0.5, -1.0)] + [h]).sum(0) * 0.1",
    "h = h + rt.stack([v for t in out for v in t] + [rt.sum(h)]).mean()",
    "h = h + len([a + n for n in nums for a in out])",
    "h = h + sum((t * s for t in out for s in (0.5, 2.0)), h * 0)",
    "h = h + rt.stack([h[k] for k in rt.nonzero(h > 0.5)] + [h[:1]]).sum()",
)

F = "rt.nn.functional"
IMAGE = "rt.tile(h, [3]).reshape([1, 1, 3, 3])"  # h's values as an image, and a volume
VOLUME = "rt.tile(h, [4]).reshape([1, 1, 2, 2, 3])"
COUNTER = (  # the counter `i` of a loop over range(tensor) used where eager has a Python int
    "h = h + i",
    f"h = h + {F}.pad(h[:2], [0, 1], value=i)",
    f"h = h + {F}.pad(h[:i % 3], [0, 3 - i % 3], value=i * 0.5)",
    "h = h + rt.randint(i, i + 1, []).astype('float32')",
    "for j in range(i):\n    h = h + j * 0.5",
    "h = h + rt.full([i], 0.5).sum() + rt.zeros([i + 1]).sum()",
    "h = h + h[:i].sum() * 0.1",
    "h = h + rt.roll(h, i) * 0.5 + h[[i % 3, 0, 2]]",
    "h[[i % 3]] = h[[i % 3]] + 1.0",
    "nums.append(i)",
    # parts and pool windows as many as the counter says, and a name changed in place, then
    # rebound (eager code changes the loop's starting tensor in the first trip only)
    "h = h + rt.stack(rt.split(rt.tile(h, [i + 1]), i + 1)).mean(0) * 0.5",
    f"h = h + {F}.avg_pool1d(rt.tile(h, [i + 1]).reshape([1, 1, -1]), i + 1).reshape([-1])",
    f"h = h + {F}.max_pool1d(h.reshape([1, 1, 3]), i % 3 + 1, stride=1).max()",
    f"h = h + {F}.adaptive_avg_pool1d(h.reshape([1, 1, 3]), i % 3 + 1).sum()",
    "h[i % 3] = h[i % 3] + 1.0\nh = h * 0.5",
    "out[0] = out[0] * 0.5\nout = [t + 0.25 for t in out]",
    'stats["n"] = stats["n"] + 1.0\nstats = {"n": stats["n"] * 0.5}',
)

# sections, a pool's padding, 3-D pools (adaptive too), `math` of the counter and a
# comprehension with two `for`s over ranges of it: a loop kind of their own ("trange_sized")
SIZED = (
    "a, b = rt.split(rt.tile(h, [2]), [i % 3 + 1, -1])\nh = h + a.sum() - b.mean()",
    "a, b, c = h.split([i % 2, 1, -1])\nh = h + b * 2.0 + c.sum() + a.sum()",
    f"h = h + {F}.avg_pool1d(h.reshape([1, 1, 3]), 3, stride=1, padding=i % 2).sum()",
    f"h = h + {F}.max_pool2d({IMAGE}, 2, stride=1, padding=i % 2).mean()",
    f"h = h + {F}.avg_pool3d({VOLUME}, [1, 1, i % 3 + 1], stride=1).sum()",
    f"h = h + {F}.max_pool3d({VOLUME}, 2, stride=1, padding=[0, i % 2, 1]).mean()",
    "h = h + math.sqrt(i) * 0.5 + math.floor(i / 2) - math.exp(-i) + math.log(i + 1.0)",
    "h = h / math.sqrt(i + 1.0) + math.cos(i) * math.tanh(float(i) - 1.0)",
    "h = h + rt.stack([h * j for j in range(i) for k in range(2)] + [h]).sum(0) * 0.1",
    f"h = h + {F}.adaptive_avg_pool3d({VOLUME}, [i % 2 + 1, 2, None]).mean()",
)

TOP = (  # outside tensor ifs and graph loops
    "o.warm = True",
    "o.log.append(len(o.log))",
    "tmp = h * 2.0\nif {c}:\n    del tmp\n    h = h + 1.0",
    "for t in out:\n    h = h + t * 0.1",
    "o.total = 0\nfor i in range({trips1}):\n    o.total = o.total + h\nh = h + o.total",
    "mixed = [rt.sum(h)]\nfor i in range({trips}):\n    mixed.append(i)\nh = h + len(mixed)",
    # ints and bools beside a float32 tensor, summed (int + tensor promotes as eager)
    ("mixed = [rt.sum(h) * 0.5]\nfor i in range({trips}):\n    mixed += [i, i > 1]\n"
     "h = h + sum(mixed) * 0.1 + sum(mixed, 0.5)"),
    # a static trip count: the counter stays a Python int
    f"for i in range(3):\n    h = h + {F}.pad(h[:i], [0, 3 - i], value=i) * ([0.5] * i + [1])[-1]",
)


@st.composite
def _stmt(draw, depth: int, in_graph: bool):
    kinds = ["simple"] * 4
    if not in_graph:
        kinds += ["top"] * 2
    if depth > 0:
        kinds += ["tif", "tif_else", "trange", "trange_sized", "for_else", "while_else",
                  "walrus_else"]
    kind = draw(st.sampled_from(kinds))
    cond = draw(st.sampled_from(TENSOR_CONDS))
    if kind == "simple":
        return draw(st.sampled_from(ANYWHERE)).format(
            n=draw(st.sampled_from(NUMBERS))).splitlines()
    if kind == "top":
        return draw(st.sampled_from(TOP)).format(c=cond, trips=TRIPS,
                                                  trips1=TRIPS_1).splitlines()
    body = draw(_block(depth - 1, True))
    if kind == "tif":
        return [f"if {cond}:"] + indent(body)
    if kind == "tif_else":  # (lists appended to a different number of times per branch)
        return [f"if {cond}:"] + indent(body) + ["else:"] + indent(
            draw(_block(depth - 1, True)))
    if kind in ("trange", "trange_sized"):
        counter = draw(st.sampled_from(COUNTER if kind == "trange" else SIZED)).splitlines()
        return [f"for i in range({TRIPS}):"] + indent(counter + body)
    if kind == "for_else":
        return ([f"for i in range({TRIPS}):"] + indent(body)
                + ["    if h[i % 3] > 1.0:", "        found = True", "        break",
                   "else:", "    found = False", "if found:", "    h = h * 2.0"])
    k = f"k{depth}"  # (one counter per nesting level: an inner loop resetting the outer
    # loop's counter can make eager code loop forever)
    if kind == "walrus_else":  # the name the test binds, read after the loop
        return ([f"{k} = rt.zeros([])", f"while (w{depth} := {k} + 1.0) < rt.abs(x[0]) + 0.5:",
                 f"    {k} = w{depth}"] + indent(body) +
                ["    if rt.sum(h) > 4.0:", "        break", "else:", "    h = h - 0.5",
                 f"h = h + w{depth}"])
    return ([f"{k} = rt.zeros([])", f"while {k} < rt.abs(x[0]) + 0.5:", f"    {k} = {k} + 1.0"]
            + indent(body) + ["    if rt.sum(h) > 4.0:", "        hit = 1", "        break",
                               "else:", "    hit = 0", "h = h + hit"])



@st.composite
def _block(draw, depth: int, in_graph: bool):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out += draw(_stmt(depth, in_graph))
    return out




@st.composite
def programs(draw, depth: int = 2):
    body = draw(_block(depth, False))
    result = RESULT
    if draw(st.booleans()):  # the list itself (tensor ifs decide its length), returned early
        result = RESULT_WITH_LIST
        body += [f"if {draw(st.sampled_from(TENSOR_CONDS))}:", f"    return {result}"]
    if draw(st.booleans()):  # a `with` block that returns under a tensor condition
        body += ["with contextlib.nullcontext():",
                 f"    if {draw(st.sampled_from(TENSOR_CONDS))}:", f"        return {result}",
                 "    h = h - 1.0"]
    source = PRELUDE + "\n".join("    " + ln for ln in body) + f"\n    return {result}\n"
    inputs = draw(st.lists(st.tuples(VECTOR, VECTOR), min_size=3, max_size=3))
    # a positive and a negative x: loops of zero trips and both sides of each condition
    inputs[0] = ([abs(v) for v in inputs[0][0]], inputs[0][1])
    inputs[1] = ([-abs(v) for v in inputs[1][0]], inputs[1][1])
    return source, inputs


class Tracker:
    """A plain object (not a Layer) whose method sets a field under a tensor `if`."""

    def __init__(self):
        self.best = rt.zeros([3])

    def update(self, v):
        if v.sum() > self.best.sum():
            self.best = v * 1.0


class Cached(rt.nn.Layer):
    """A streaming Layer whose forward reassigns its registered buffer under a tensor `if`."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", rt.zeros([3]))

    def forward(self, v):
        if v.mean() > 0.0:
            self.cache = self.cache * 0.5 + v
        return v + self.cache


class State:
    """The object passed in as `o`: a call counter, a flag and a log the function writes on
    every call (compared after each call), a field a graph loop makes a tensor, a `Tracker`
    and a `Cached` Layer (their field and buffer compared after each call)."""

    def __init__(self):
        self.calls = 0
        self.warm = False
        self.log = []
        self.tracker = Tracker()
        self.cached = Cached()

    def observed(self) -> dict:
        fields = {k: v for k, v in vars(self).items() if k not in ("tracker", "cached")}
        return {**fields, "best": self.tracker.best, "cache": self.cached.cache}


def make_state():
    return State()
