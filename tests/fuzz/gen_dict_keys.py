"""Generated functions whose dicts get keys on some paths only (issue 35): a local dict and a
dict on the object passed in (`o.stats`, kept between calls) get keys set, read with `.get`,
`setdefault`, `in`, `len`, `pop` with a default (None too), `del` and comprehensions, and set
under a computed key of two values (`d[int(x[0] > 0.5)]`), in nested tensor `if`s and graph loops
(`for` over `range()` of a tensor, a `while` on a tensor), and the dicts are looped over and
returned. The object's `meter` dict (Python numbers, a nested dict) gets its items grown in
the same places (issues 33 and 35): by `.item()` and `float()` values, by a tensor (a number
after no trips, the tensor after others), an int item made a float, a nested item, and a
helper called with the dict (`bump(o.meter, "sum", v)`). Each program runs eagerly and
converted over inputs that take different paths through one program; the object's dicts
after each call are compared too.

`programs()` is a hypothesis strategy of `(source, inputs)`: `source` defines `f(x, y, o)`
(x, y: float32 [3]; `o` made by `make_box`).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .gen_state import VECTOR, indent

PRELUDE = '''\
def bump(m, k, v):
    m[k] += v


def f(x, y, o):
    h = x * 1.0
    d = {}
    acc = 0
'''

RESULT = 'h, acc, len(d), "a" in d, d.get("b", x * 0.0 - 5.0), len(o.stats)'
KEYS = ("a", "b", "c")
TENSOR_CONDS = ("rt.mean(x) > 0.0", "x[0] > 0.5", "y[1] > x[2]", "rt.sum(h) > 1.0")
TRIPS = "rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), 'int64')"  # 0..3 trips
CHANGES = (
    'd["{k}"] = d.get("{k}", x * 0.0) + h * 0.5',
    'd["{k}"] = h * 2.0',
    'd.setdefault("{k}", y * 1.0)',
    'o.stats["{k}"] = h * 1.5',
    'd["n"] = d.get("n", 0) + 1',  # (a Python number: under a key of its own, as a value
    # that is a number on one path and a tensor on another is another matter)
    'd.pop("{k}", None)',  # (removed on every trip of a graph loop, or under a tensor if)
    'if "{k}" in d:\n    del d["{k}"]',
    'd[int(x[0] > 0.5)] = h * 0.25',  # (a computed key of two values: 0 and 1)
    'o.meter["sum"] += h.sum().item()',  # (items of a dict on the object: Python numbers,
    'o.meter["n"] += 1',  # an int made a float, a tensor after trips, a nested item, a
    'o.meter["n"] += 0.5',  # helper's change)
    'o.meter["t"] += h.sum()',
    'o.meter["ema"]["loss"] = 0.5 * o.meter["ema"]["loss"] + float(h.mean())',
    'bump(o.meter, "sum", h.max().item())',
)
READS = (
    'acc = acc + (1 if "{k}" in d else 0)',
    'acc = acc + len(d)',
    'h = h + d.get("{k}", x * 0.0)',
    'h = h + d.pop("{k}", y * 0.0)',
    'if "{k}" in d:\n    h = h + d["{k}"]',
    'for v in d.values():\n    h = h + v * 0.5',
    'for k, v in d.items():\n    h = h * 0.5 + v',  # (order-sensitive: the run's key order)
    'acc = acc + len([k for k in d])',  # (comprehensions: as the `for` over the dict)
    'h = h + sum([v * 0.5 for v in d.values()], x * 0.0)',
    'h = h + sum({{kk: v * 0.5 for kk, v in d.items()}}.values(), x * 0.0)',
)


def make_box():
    class Box:
        def __init__(self):
            self.stats = {}
            self.meter = {"sum": 0.0, "n": 0, "t": 0.0, "ema": {"loss": 0.0}}

        def observed(self):
            return {"stats": dict(self.stats), "meter": {
                k: dict(v) if type(v) is dict else v for k, v in self.meter.items()}}
    return Box()


@st.composite
def _stmt(draw, depth: int, in_loop: bool):
    kinds = ["change", "change", "read"]
    if depth > 0:
        kinds += ["tif", "tif_else", "tloop"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("change", "read"):
        template = draw(st.sampled_from(CHANGES if kind == "change" else READS))
        return template.format(k=draw(st.sampled_from(KEYS))).splitlines()
    if kind == "tloop":
        loop = draw(st.sampled_from((f"for i in range({TRIPS}):",)))
        return [loop] + indent(draw(_block(depth - 1, True)))
    cond = draw(st.sampled_from(TENSOR_CONDS))
    body = [f"if {cond}:"] + indent(draw(_block(depth - 1, in_loop)))
    if kind == "tif_else":
        body += ["else:"] + indent(draw(_block(depth - 1, in_loop)))
    return body


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
    inputs[0] = ([abs(v) for v in inputs[0][0]], inputs[0][1])  # both ways through each
    inputs[1] = ([-abs(v) for v in inputs[1][0]], inputs[1][1])  # tensor condition on x
    return source, inputs
