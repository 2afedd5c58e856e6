"""Each converter alone, on plain Python values: the converted function gives exactly the
original's results on inputs that take different paths, and the converter did rewrite it."""
import pytest

from d2s import converters, transpile
from d2s.pyct import parser


def early_exit(x, n):
    if x > n:
        return "big"
    if x < 0:
        return "negative"
    y = x * 2
    return y


def loops_with_jumps(xs, stop):
    total = 0
    for v in xs:
        if v < 0:
            continue
        if v == stop:
            break
        total += v
    else:
        total = -total
    i = 0
    while True:
        i += 1
        if i * i > total:
            break
    return total, i


def returns_in_loops(xs, target):
    for i, v in enumerate(xs):
        for w in range(v):
            if w == target:
                return i, w
    return None


def logic(a, b, c, calls):
    def side(v):
        calls.append(v)
        return v
    r1 = a and side(b)
    r2 = a or side(c)
    r3 = not a
    r4 = a < b < c
    r5 = 0 <= side(a + b) < 10
    return r1, r2, r3, r4, r5, list(calls)


def asserts(x):
    assert x >= 0, f"negative: {x}"
    return x + 1


def lists(n):
    out = []
    for i in range(n):
        out.append(i * i)
    last = out.pop() if out else None
    stack = [1, 2, 3]
    stack.pop()
    return out, last, stack


def loops_and_state(x, n):
    s = 0
    i = 0
    while i < n:
        s = s + x * i
        i += 1
    acc = []
    for k, v in enumerate(range(n, 0, -2)):
        acc = acc + [k * v]
    for j in range(n):
        pass
    return s, acc, i


def branches(x, mode):
    if x > 0:
        y = x
    elif x < -5:
        y = -x
        z = 1  # noqa: F841  (bound in one branch only, never read)
    else:
        y = 0
    w = "pos" if x > 0 else "nonpos"
    if mode:
        q = y + 1
    else:
        q = y - 1
    return y, w, q


def builtins_(xs, flag):
    n = len(xs)
    b = bool(flag)
    i = int(3.7) + float(n)
    print("n", n, sep="=", end=";\n")
    return n, b, i, isinstance(xs, list), list(range(n))


class Obj:
    def helper(self, x):
        return x * 3


def calls(x, obj):
    def inner(v):
        return v + 1
    f = lambda v: v * 2
    return inner(x) + f(x) + obj.helper(x) + max(x, 1)


CASES = [
    ("early_return", early_exit, [(5, 3), (-1, 3), (2, 3)], "else"),
    ("break_continue", loops_with_jumps, [([1, -1, 2, 5, 3], 5), ([1, 2], 9), ([], 0)],
     "_brk_"),
    ("return_statements", returns_in_loops, [([1, 2, 3], 1), ([0, 0], 1), ([4], 5)],
     "_do_return"),
    ("logical", logic, [(0, 1, 2, []), (1, 2, 3, []), (1, 0, 5, []), (5, 4, 3, [])],
     "_d2s.and_"),
    ("asserts", asserts, [(1,), (0,)], "_d2s.assert_"),
    ("lists", lists, [(0,), (1,), (4,)], "_d2s.list_append"),
    ("loops", loops_and_state, [(1, 0), (2, 3), (3, 5)], "_d2s.while_loop"),
    ("ifelse", branches, [(3, True), (-7, False), (-1, True), (0, False)], "_d2s.ifelse"),
    ("builtin_calls", builtins_, [([1, 2], 0), ([], 1)], "_d2s.len_"),
    ("call_trees", calls, [(1, Obj()), (4, Obj())], "_d2s.call("),
]


@pytest.mark.parametrize("name, fn, arg_sets, marker", CASES, ids=[c[0] for c in CASES])
def test_one_converter_keeps_python_semantics(name, fn, arg_sets, marker, capsys):
    converted = transpile.convert_with(fn, [name])
    for args in arg_sets:
        expected = _outcome(fn, args)
        out_expected = capsys.readouterr().out
        assert _outcome(converted, args) == expected, (name, args)
        assert capsys.readouterr().out == out_expected
    code = parser.unparse(parser.parse_function(converted).node)
    assert marker in code, f"{name} did not rewrite {fn.__name__}:\n{code}"


def _outcome(fn, args):
    args = [list(a) if isinstance(a, list) else a for a in args]  # fresh mutable inputs
    try:
        return ("ok", fn(*args))
    except AssertionError as e:
        return ("assert", str(e))


@pytest.mark.parametrize("fn", [c[1] for c in CASES], ids=[c[1].__name__ for c in CASES])
def test_all_converters_keep_python_semantics(fn, capsys):
    case = next(c for c in CASES if c[1] is fn)
    converted = transpile.convert(fn)
    for args in case[2]:
        assert _outcome(converted, args) == _outcome(fn, args)


def test_code_levels_are_the_passes_in_order():
    assert converters.NAMES[0] == "early_return" and converters.NAMES[-1] == "call_trees"
    levels = [transpile.convert_source(branches, k) for k in range(len(converters.PASSES) + 1)]
    assert "_d2s" not in levels[0]
    assert "_d2s.ifelse" not in levels[converters.NAMES.index("ifelse")]
    assert "_d2s.ifelse" in levels[converters.NAMES.index("ifelse") + 1]
    assert levels[-1] == transpile.converted_source(branches)
