"""Generated functions whose dicts get keys on some paths only (issue 35): a local dict and a
dict on the object passed in (`o.stats`, kept between calls) get keys set, read with `.get`,
`setdefault`, `in`, `len`, `pop` with a default (None too), `del` and comprehensions, and set
under a computed key of two values (`d[int(x[0] > 0.5)]`), in nested tensor `if`s and graph loops
(`for` over `range()` of a tensor, a `while` on a tensor), and the dicts are looped over and
returned. Each program runs eagerly and converted over inputs that take different paths
through one program; the object's dict after each call is compared too.

`programs()` is a hypothesis strategy of `(source, inputs)`: `source` defines `f(x, y, o)`
(x, y: float32 [3]; `o` made by `make_box`).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .gen_state import VECTOR, indent

PRELUDE = '''\
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

        def observed(self):
            return dict(self.stats)
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
