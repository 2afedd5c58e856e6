"""Generated functions that change mutable state: lists, nested dicts, tensors written through
aliases and helpers, attributes of an object passed in, closure cells — under tensor and
Python `if` / `while` / `for` with `break` / `continue` / `return`.

`programs()` is a hypothesis strategy of `(source, inputs)`: `source` defines `f(x, y, o)`
(x, y: float32 [3]; o: a `Box` made by `make_box`, whose state after the call is compared
too); `inputs` are several (x, y) pairs whose signs differ, so tensor conditions go different
ways through one converted program.
"""
from __future__ import annotations

from hypothesis import strategies as st

PRELUDE = '''\
def zero_first(t):
    t[0] = 0.0


def push_to(items, v):
    items.append(v)


def add_to(t, v):
    t[1] = t[1] + v[1]


def f(x, y, o):
    h = x * 1.0
    buf = y * 1.0
    alias = buf
    lst = [x * 1.0, y * 1.0]
    d = {"a": {"k": x * 1.0}, "b": y * 1.0}
    cell = x * 0.0
    pairs = [(x * 1.0, {"y": y * 1.0})]

    def bump(v):
        nonlocal cell
        cell = cell + v

    def push(v):
        lst.append(v)

    def put(key, v):
        d["a"][key] = v

    o.t = x * 1.0
'''

RESULT = "h, buf, alias, lst, d, cell"

EXPRS = ("x", "y", "h * 0.5", "buf + 1.0", 'd["b"] * 0.5', "o.t - y", "lst[-1]",
         "cell + x", 'd["a"]["k"]')

# Statements that keep every container's shape (key set, length): representable under any
# condition. {e} is an expression, {i} an index 0..2.
SAME_SHAPE = (
    "h = h + {e}",
    "buf[{i}] = ({e})[{i}]",
    "alias[{i}] = ({e})[{i}] * 2.0",
    "zero_first(alias)",
    "zero_first(buf)",
    "add_to(alias, {e})",
    'd["a"]["k"] = {e}',
    'd["b"] = d["b"] + {e}',
    'd.update({{"b": {e}}})',
    'put("k", {e} * 3.0)',
    "lst[0] = lst[0] + {e}",
    "lst[-1] = {e} - 1.0",
    "o.t = o.t + {e}",
    "o.n += 1",
    "o.k += 1",
    "bump({e})",
    "cell = cell + {e}",
)

# Statements that change a list's length (a tensor array where the count depends on a tensor).
GROWING = (
    "lst.append({e})",
    "push({e} * 2.0)",
    "push_to(lst, {e} + 1.0)",
    "h = h + lst.pop()",
    "lst.pop(0)",
    'pairs.append(({e}, {{"y": {e} * 0.5}}))',
    'h = h + pairs[-1][1]["y"]',
    "h = h + pairs.pop()[0]",
)

# Python conditions: structure, shapes, and a Python counter kept on the object across calls
# (`o.k`, changed by `o.k += 1`: program state, so a condition on it is decided per call)
PY_CONDS = ("len(d) == 2", "x.shape[0] == 3", "True", "o.k % 2 == 0")

TENSOR_CONDS = ("rt.mean(x) > 0.0", "rt.sum(h) > 1.0", "y[0] > x[1]", "rt.max(buf) < 1.5",
                "o.t[2] > 0.0")


@st.composite
def _stmt(draw, depth: int, in_loop: bool, growing: bool):
    kinds = ["simple"] * 4
    if depth > 0:
        kinds += ["tif", "tif", "pif", "pfor", "twhile"]
    if in_loop:
        kinds += ["jump"]
    kinds += ["ret"]
    kind = draw(st.sampled_from(kinds))
    e = draw(st.sampled_from(EXPRS))
    i = draw(st.integers(0, 2))
    if kind == "simple":
        pool = SAME_SHAPE + (GROWING if growing else ())
        return [draw(st.sampled_from(pool)).format(e=e, i=i)]
    if kind == "ret":
        return [f"if {draw(st.sampled_from(TENSOR_CONDS))}:", f"    return {RESULT}"]
    if kind == "jump":
        jump = draw(st.sampled_from(("break", "continue")))
        cond = draw(st.sampled_from(TENSOR_CONDS + ("i == 1",)))
        return [f"if {cond}:", f"    {jump}"]
    body = draw(_block(depth - 1, in_loop or kind in ("pfor", "twhile"), growing))
    if kind == "tif":
        out = [f"if {draw(st.sampled_from(TENSOR_CONDS))}:"] + indent(body)
        if draw(st.booleans()):
            out += ["else:"] + indent(draw(_block(depth - 1, in_loop, growing)))
        return out
    if kind == "pif":
        out = [f"if {draw(st.sampled_from(PY_CONDS))}:"]
        return out + indent(body) + ["else:"] + indent(draw(_block(depth - 1, in_loop,
                                                                      growing)))
    if kind == "pfor":
        return ["for i in range(2):"] + indent(body)
    # a tensor while whose trip count depends on the input (1..4 iterations)
    k = f"k{depth}"
    return ([f"{k} = rt.zeros([])", "i = 0", f"while {k} < rt.abs(x[0]) + 0.5:",
             f"    {k} = {k} + 1.0"] + indent(body))


def indent(lines):
    """`lines` one level deeper (the fuzz generators build bodies line by line)."""
    return ["    " + ln for ln in lines]


@st.composite
def _block(draw, depth: int, in_loop: bool, growing: bool):
    n = draw(st.integers(1, 3))
    out = []
    for _ in range(n):
        out += draw(_stmt(depth, in_loop, growing))
    return out


VALUES = st.sampled_from([-2.75, -1.25, -0.25, 0.25, 0.75, 1.25, 2.25])
VECTOR = st.lists(VALUES, min_size=3, max_size=3)


@st.composite
def programs(draw, growing: bool = True, depth: int = 2):
    body = draw(_block(depth, False, growing))
    source = PRELUDE + "\n".join("    " + ln for ln in body) + f"\n    return {RESULT}\n"
    inputs = draw(st.lists(st.tuples(VECTOR, VECTOR), min_size=3, max_size=3))
    # at least one input with a positive and one with a negative mean of x
    inputs[0] = ([abs(v) for v in inputs[0][0]], inputs[0][1])
    inputs[1] = ([-abs(v) for v in inputs[1][0]], inputs[1][1])
    return source, inputs


class Box:
    """The object passed in as `o` (one per side for all calls of a function, so every call
    runs one program): its attributes after each call are compared too. `n` is a tensor the
    program reads by reference; `reset` puts it back to 0 in place before each call."""

    def __init__(self):
        import runtime as rt
        self.n = rt.to_tensor(0.0)
        self.k = 0  # a Python counter that persists across calls (a side effect replayed)

    def reset(self):
        self.n.set_value(self.n * 0.0)
        vars(self).pop("t", None)


def make_box():
    return Box()
