"""Generated functions for the Python sets and number sums a user observes (issue 33): sets
changed under tensor `if`s by their methods, by a helper they are passed to, through an alias
(`alias[0]`), holding traced pairs, then read by what Python offers (a comprehension, a
generator, `s | t`, `s <= t`, `str`, `{*s}`, `in`, `max`), also after an early `return`
inside the `if`; set algebra, comparisons and methods of the set of traced pairs (`&`, `-`,
`^`, `==`, `.intersection`, `.issubset`, `.isdisjoint`, `sorted`, `[*s]`, a loop, also where
the converter cannot see an operand is a set: a helper's parameter, a set held in a dict, a
global frozenset, `[s] == [t]`, a frozenset in a set, `set.intersection(s, t)`; and the
`sum(p in s for p in t)` that counts common items by value, `iter`, `map`); a dict keyed by
a computed int (also beside a Python key, and in a display) read by `.get`, `in` and `len`; lists of Python floats with ints beside them grown in
graph loops and summed with int and float starts.

`programs()` is a hypothesis strategy of `(source, inputs)` as `gen_observe`'s (same inputs
and argument object): a set whose items only the run decides must be refused (a documented
`ConversionError`), never read with the items of both branches.
"""
from __future__ import annotations

from hypothesis import strategies as st

from .gen_observe import TENSOR_CONDS
from .gen_state import VECTOR, indent

PRELUDE = '''\
KNOWN = frozenset({(0, 1), (1, 1)})


def mark(s, item):
    s.add(item)


def common(s, t):
    return len(s & t)


def held(s):
    return {"s": s}


def f(x, y, o):
    h = x * o.scale
    tags = {0}
    alias = [tags]
    seen = {(0, 1)}
    table = {}
    lengths = [0.5]
    k = rt.zeros([])
'''

RESULT = "h, len(lengths), sum(lengths), sum(lengths, 0.25), sum(lengths, 1)"

INTS = ("0", "1", "2", "3")
NUMBERS = ("0", "1", "3", "-1", "0.1", "0.2", "1.5", "0.25")

# Statements that change a set (never inside a graph loop: refused there, documented).
CHANGES = (
    "mark(tags, {i})",
    "tags.add({i})",
    "tags.discard({i})",
    "mark(alias[0], {i})",
    "seen.add(({i}, 1))",
    "mark(seen, (int(x[0] > 0.0), {i}))",
    "seen.discard((1, {i}))",
    "seen -= {{(1, 1)}}",
    "seen &= {{(0, 1), (1, {i})}}",
    "table[int(x[0] > 0.0)] = {i}",
    "table[{i}] = 1",
)

# Statements that read a set.
READS = (
    "h = h + len([t for t in tags])",
    "h = h + sum(1 for t in tags if t > 0)",
    "h = h + len(tags | {{7}})",
    "h = h + len(tags - {{0}})",
    "h = h + float(tags <= {{0, 1, 2}})",
    "h = h + len(str(sorted(tags)))",
    "h = h + len({{*tags}})",
    "h = h + (1.0 if {i} in tags else 0.0)",
    "h = h + max(tags)",
    "h = h + len(seen & {{(0, 1), (1, 1)}})",
    "h = h + float(any(p == (1, 1) for p in seen))",
    "h = h + (2.0 if (1, {i}) in seen else 0.0)",
    "h = h + len(seen - {{(0, 1)}})",
    "h = h + len(seen ^ {{(1, 1)}})",
    "h = h + float(seen <= {{(0, 1), (1, 1)}})",
    "h = h + float(seen == {{(0, 1), (1, 1)}})",
    "h = h + len(seen.intersection({{(1, {i})}}))",
    "h = h + len(seen.union({{(1, 1)}}))",
    "h = h + float(seen.issubset({{(0, 1), (1, 1)}}))",
    "h = h + float(seen.isdisjoint({{(1, {i})}}))",
    "h = h + len(sorted(seen))",
    "h = h + len([*seen])",
    "h = h + sum(p in seen for p in {{(0, 1), (1, {i})}})",
    "for p in seen:\n    h = h + p[1]",
    "h = h + table.get(1, 0)",
    "h = h + float({i} in table)",
    "h = h + len(table)",
    "h = h + len({{0: 1, int(x[1] > 0.0): 2}})",
    "h = h + next(iter(seen))[1]",
    "h = h + len(list(map(lambda p: p[0], seen)))",
    "h = h + common(seen, {{(0, 1), (1, {i})}})",
    "h = h + common({{(1, {i})}}, seen)",
    "h = h + common(tags, {{0, {i}}})",
    "h = h + len(KNOWN - held(seen)['s'])",
    "h = h + len(held(tags)['s'] ^ {{{i}}})",
    "h = h + float([seen] == [{{(1, {i})}}])",
    "h = h + float(frozenset(seen) in {{frozenset({{(1, 1)}})}})",
    "h = h + len(set.intersection(seen, {{(1, {i})}}))",
    "h = h + common(KNOWN | seen, {{(1, 1)}})",
)

NUMBER_STMTS = ("lengths.append({n})", "h = h + sum(lengths)", "h = h + len(lengths)")


def _fill(draw, template: str) -> list:
    return template.format(i=draw(st.sampled_from(INTS)),
                           n=draw(st.sampled_from(NUMBERS))).splitlines()


@st.composite
def _stmt(draw, depth: int, in_loop: bool):
    kinds = ["read", "number", "number"] + ([] if in_loop else ["change", "change"])
    if depth > 0:
        kinds += ["tif", "tif_else", "twhile"] + ([] if in_loop else ["tif_return"])
    kind = draw(st.sampled_from(kinds))
    if kind == "read":
        return _fill(draw, draw(st.sampled_from(READS)))
    if kind == "number":
        return _fill(draw, draw(st.sampled_from(NUMBER_STMTS)))
    if kind == "change":
        return _fill(draw, draw(st.sampled_from(CHANGES)))
    cond = draw(st.sampled_from(TENSOR_CONDS))
    if kind == "twhile":  # 0..4 iterations
        k = f"k{depth}"
        return ([f"{k} = rt.zeros([])", f"while {k} < x[0] * 2.0:", f"    {k} = {k} + 1.0"]
                + indent(draw(_block(depth - 1, True))))
    body = draw(_block(depth - 1, in_loop))
    if kind == "tif":
        return [f"if {cond}:"] + indent(body)
    if kind == "tif_else":
        return [f"if {cond}:"] + indent(body) + ["else:"] + indent(draw(_block(depth - 1,
                                                                               in_loop)))
    return [f"if {cond}:"] + indent(body) + [f"    return {RESULT}"]


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
