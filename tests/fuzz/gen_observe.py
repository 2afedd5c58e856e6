"""Generated functions for what a user observes beyond a tensor's values (issue 33): lists of
Python numbers and bools grown, popped and summed in graph loops and read after them (also
after loops that run zero times); Python numbers made from tensors (`int(...)`, `float(...)`)
returned; lists of tuples (of tensors; of Python numbers and bools) grown and popped there; a
loop-carried tensor whose dtype the body widens (whether it is still int32 returned); fields
of the argument object that the caller changes between calls (`o.scale`, `o.cfg["shift"]`)
and a dict passed in that the function counts into (`o.stats["count"] += 1`); membership of
traced pairs in a set and of a traced number in a dict; `try`/`finally` whose `finally`
returns, breaks or continues; a Python float that tensor `if`s and graph loops make a 0-d tensor
on some paths (and a number again on others), returned and tested with `isinstance`.

`programs()` is a hypothesis strategy of `(source, inputs)`: `source` defines `f(x, y, o)`
(x, y: float32 [3]; o: an `Observed` made by `make_observed`, whose fields after each call are
compared too); `inputs` are several (x, y) pairs whose signs differ, so tensor conditions go
different ways through one converted program.
"""
from __future__ import annotations

from hypothesis import strategies as st

from .gen_state import VECTOR, indent

PRELUDE = '''\
def f(x, y, o):
    h = x * o.scale
    lengths = []
    nums = [3, 1]
    flags = []
    pairs = [(h[0], h[1])]
    tagged = []
    seen = {(0, 1)}
    marks = {0: 0.5}
    acc = rt.zeros([], "int32")
    k = rt.zeros([])
    num = 1.5
'''

RESULT = ("h, len(lengths), sum(lengths), len(nums), sum(nums), len(flags), sum(flags), "
          "int(rt.sum(x > 0.0)), float(rt.mean(h)), acc, acc.dtype == rt.int32, len(pairs), "
          "pairs[-1][0], len(tagged), num, isinstance(num, float), num * 2.0 + 1.0")

NUMBERS = ("0", "1", "2", "1.5", "0.25", "-1")
BOOLS = ("True", "False")
TENSOR_CONDS = ("rt.mean(x) > 0.0", "rt.sum(h) > 1.0", "y[0] > x[1]", "x[2] < 0.5")
PY_CONDS = ("o.scale > 1.0", 'o.cfg["mode"] == "add"', "len(seen) == 1")

# Statements valid anywhere (in graph loops too). {n}: a Python number, {b}: a bool.
ANYWHERE = (
    "lengths.append({n})",
    "nums.append({i})",
    "nums.insert(0, {i})",
    "flags.append({b})",
    "pairs.append((h[0] * 0.5, h[2]))",
    "h = h + len(pairs) + pairs[-1][1]",
    "tagged.append(({i}, {b}))",
    "h = h + len(nums)",
    "h = h + sum(nums) * 0.5",
    "h = h * o.scale",
    'h = h + o.cfg["shift"]',
    'o.stats["count"] += 1',
    "o.steps += 1",
    # a Python float on some paths and a 0-d tensor on others (`number_or_tensor`)
    "num = num + h[0] * 0.5",
    "num = num * 2.0",
    "num = {f}",
    "num = float(h[1])",
)

# Only outside graph loops (a set changed in a graph loop is not what this generator tests).
TOP = (
    ("pair = (int(x[0] > 0.0), int(y[1] > 0.0))\nif pair in seen:\n    h = h + 1.0\n"
     "seen.add(pair)"),
    "if (int(x[1] > 0.0), 1) in seen:\n    h = h - 2.0",
    # a dict keyed by a Python number, tested with a computed one (by value)
    "key = int(y[0] > 0.0)\nif key in marks:\n    h = h + marks[0]",
)


@st.composite
def _stmt(draw, depth: int, in_loop: bool):
    kinds = ["simple"] * 4 + ["pop"]
    if not in_loop:
        kinds += ["top"]
    if depth > 0:
        kinds += ["tif", "pif", "twhile", "twhile_maybe_none", "trange", "finally"]
    if depth > 0 and not in_loop:  # (inside a loop that may not run, reading the widened
        kinds += ["widen"]          # value is a documented TypeError: tests/d2s/observe_state)
    kind = draw(st.sampled_from(kinds))
    if kind == "simple":
        return draw(st.sampled_from(ANYWHERE)).format(
            n=draw(st.sampled_from(NUMBERS)), i=draw(st.sampled_from(("0", "1", "5"))),
            f=draw(st.sampled_from(("0.25", "2.0", "-1.5"))),
            b=draw(st.sampled_from(BOOLS))).splitlines()
    if kind == "top":
        return draw(st.sampled_from(TOP)).splitlines()
    if kind == "pop":
        which = draw(st.sampled_from(("nums.pop()", "nums.pop(0)", "pairs.pop()[0]")))
        return [f"if len({which[:which.index('.')]}) > 1:", f"    h = h + {which}"]
    body = draw(_block(depth - 1, True))
    if kind == "tif":
        return [f"if {draw(st.sampled_from(TENSOR_CONDS))}:"] + indent(body)
    if kind == "pif":
        other = draw(_block(depth - 1, in_loop))
        return ([f"if {draw(st.sampled_from(PY_CONDS))}:"] + indent(body) + ["else:"]
                + indent(other))
    k = f"k{depth}"  # (a counter per nesting depth: an inner loop resetting the outer's
    #                    counter would loop forever, eagerly too)
    if kind == "twhile":  # 1..4 iterations
        return ([f"{k} = rt.zeros([])", f"while {k} < rt.abs(x[0]) + 0.5:",
                 f"    {k} = {k} + 1.0"] + indent(body))
    if kind == "twhile_maybe_none":  # zero iterations for x[0] <= 0
        return ([f"{k} = rt.zeros([])", f"while {k} < x[0]:", f"    {k} = {k} + 1.0"]
                + indent(body))
    if kind == "trange":  # range of a tensor: 0..3 iterations
        return (["for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), 'int64')):",
                 "    h = h + i"] + indent(body))
    if kind == "widen":  # the body makes the int32 accumulator float32; runs at least once
        return [f"{k} = rt.zeros([])", f"while {k} < rt.abs(y[0]) + 0.5:",
                f"    {k} = {k} + 1.0", "    acc = acc + y[1]"] + indent(body)
    # try / finally: the finally returns, or (in a loop of its own) breaks / continues
    cond = draw(st.sampled_from(TENSOR_CONDS + PY_CONDS))
    if draw(st.booleans()):
        return (["try:"] + indent(body) + [f"    if {draw(st.sampled_from(TENSOR_CONDS))}:",
                                            f"        return {RESULT}", "finally:",
                                            f"    if {cond}:", f"        return {RESULT}"])
    jump = draw(st.sampled_from(("break", "continue")))
    return (["for j in range(2):", "    try:"] + indent(indent(body))
            + [f"        if {draw(st.sampled_from(TENSOR_CONDS))}:",
               f"            return {RESULT}", "    finally:", f"        if {cond}:",
               f"            {jump}"])



@st.composite
def _block(draw, depth: int, in_loop: bool):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out += draw(_stmt(depth, in_loop))
    return out




@st.composite
def programs(draw, depth: int = 2):
    body = draw(_block(depth, False))
    source = PRELUDE + "\n".join("    " + ln for ln in body) + f"\n    return {RESULT}\n"
    inputs = draw(st.lists(st.tuples(VECTOR, VECTOR), min_size=3, max_size=3))
    # at least one input with a positive and one with a negative x (loops that never run)
    inputs[0] = ([abs(v) for v in inputs[0][0]], inputs[0][1])
    inputs[1] = ([-abs(v) for v in inputs[1][0]], inputs[1][1])
    return source, inputs


class Observed:
    """The object passed in as `o` (one per side for all calls of a function): the caller
    changes `scale` and `cfg` between calls (`reset`, run before each call, steps through
    fixed values), so a program traced for old values must not be reused; `stats` (a dict)
    and `steps` persist across calls and are compared after each call."""

    SCALES = (2.0, 2.0, 0.5)  # (the third call needs a program of its own)
    CONFIGS = ({"mode": "add", "shift": 1.0}, {"mode": "add", "shift": 1.0},
               {"mode": "mul", "shift": 0.25})

    def __init__(self):
        self.calls = 0
        self.scale = self.SCALES[0]
        self.cfg = dict(self.CONFIGS[0])
        self.stats = {"count": 0}
        self.steps = 0

    def reset(self):
        self.scale = self.SCALES[self.calls % len(self.SCALES)]
        self.cfg.update(self.CONFIGS[self.calls % len(self.CONFIGS)])
        self.calls += 1


def make_observed():
    return Observed()
