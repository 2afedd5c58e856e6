"""`converters/receivers.py` judges whether each local always holds a library value from every
expression bound to it: an unrolled model binds `h` to the same few expressions thousands of
times (`benchmarks/huge_function.py`), and each text is judged once per name (the judgement is
of the names and callees in the text, the same wherever it is). Counts of judged nodes, not
times; and one binding that differs among the repeated ones still decides, eager vs static."""
from __future__ import annotations

import importlib.util

import numpy as np

import d2s
import runtime as rt
from d2s import transpile
from d2s.converters import receivers
from d2s.pyct import origin, parser


class Meter:
    def __init__(self):
        self.n = 0

    def sum(self):
        self.n += 1
        return self.n


def _module(folder, name: str, lines: list[str]):
    path = folder / f"{name}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.Meter = Meter
    spec.loader.exec_module(module)
    return module


def _unrolled(n: int, odd: bool = False) -> list[str]:
    lines = ["import runtime as rt", "", f"def step_{n}(x, w, m):", "    h = x", "    k = 0"]
    for i in range(n):
        lines += ["    h = rt.matmul(h, w) * 0.5", "    s = h.sum(axis=-1, keepdim=True)",
                  "    h = h / (s.abs() + 1.0)"]
        if odd and i == n // 2:  # (`s` holds the meter passed in, once)
            lines += ["    s = m", "    k = s.sum()"]
    lines.append("    return h.sum() + s.sum() + k")
    return lines


def _judged(fn) -> tuple[int, dict]:
    """(expression nodes judged, name -> the parameters it holds a library value through,
    or None) of `fn`'s locals."""
    count = [0]
    judge = receivers.Receivers._value

    def counted(self, node):
        count[0] += 1
        return judge(self, node)

    parsed = parser.parse_function(fn)
    receivers.Receivers._value = counted
    try:
        with transpile.deep_recursion():
            found = receivers.Receivers(parsed.node, fn.__globals__, True, None,
                                        origin.user_source(parsed.filename))
    finally:
        receivers.Receivers._value = judge
    return count[0], {name: found._known[name] for name in ("x", "h", "s")}


def test_repeated_bindings_are_judged_once_per_text(tmp_path):
    small = _module(tmp_path, "small", _unrolled(20))
    large = _module(tmp_path, "large", _unrolled(400))
    judged_small, names_small = _judged(small.step_20)
    judged_large, names_large = _judged(large.step_400)
    assert names_small == names_large == {"x": frozenset("x"), "h": frozenset("xw"),
                                          "s": frozenset("xw")}
    assert judged_large <= judged_small * 1.5, (judged_small, judged_large)  # (was 20x)


def test_one_other_binding_among_repeated_ones_still_decides(tmp_path):
    module = _module(tmp_path, "odd", _unrolled(60, odd=True))
    fn = module.step_60
    # `s = m` once among 60 `s = h.sum(...)`: `s` (and `h`, through `s.abs()`) holds what `m`
    # holds, checked each call (a Meter: the conversion that assumes nothing runs its `sum`)
    assert _judged(fn)[1] == {"x": frozenset("x"), "h": frozenset("xwm"),
                              "s": frozenset("xwm")}
    static = d2s.to_static(fn)
    rng = np.random.default_rng(3)
    w = rt.to_tensor((rng.standard_normal([4, 4]) * 0.3).astype("float32"))
    m_eager, m_static = Meter(), Meter()
    for sign in (1.0, -1.0, 1.0):
        x = rt.to_tensor((sign * np.abs(rng.standard_normal([2, 4]))).astype("float32"))
        want = fn(x, w, m_eager)
        got = static(x, w, m_static)
        assert type(got) is type(want) and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
        assert m_static.n == m_eager.n
    assert m_eager.n == 3
