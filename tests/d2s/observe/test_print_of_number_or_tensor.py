"""`print` of a value that is a Python number on some runs and a tensor on others (a tensor
`if` that sets it on one path, `b = 1` before; a `sum()` of a list a tensor filter decides,
whose start is the int 0): eager prints the number (`1`, `0`, `0.500`) on those runs; the
converted call printed the tensor the program holds there (`Tensor(shape=[], ...)`).
Eager vs static through one program, on inputs that take both paths."""
import numpy as np
import pytest

import d2s
import runtime as rt


def running_bonus(x):
    bonus = 1
    if x.mean() > 0:
        bonus = x.mean() * 2
    print("bonus", bonus)
    print(f"bonus={bonus} scaled={bonus * 3}")
    return bonus


def kept_total(x):
    total = sum(v.mean() for v in (x, x * 2, -x) if v.max() > 1)
    print("total:", total, end=";\n")
    print(f"[{total}]", [total])
    return total


def formatted_total(x):
    total = sum(v.mean() for v in (x, x * 2, -x) if v.max() > 1)
    print(f"{total:.3f}")  # (eager: a TypeError where total is a tensor)
    return total


def _outputs(fn, rows, capsys):
    out = []
    for row in rows:
        fn(rt.to_tensor(np.asarray(row, "float32")))
        out.append(capsys.readouterr().out)
    return out


def test_prints_follow_the_run(capsys):
    for fn, rows in ((running_bonus, ([1.0, 2.0], [-0.5, -1.0])),
                     (kept_total, ([1.0, 2.0], [0.1, 0.2]))):
        static = d2s.to_static(fn)
        want = _outputs(fn, rows, capsys)
        got = _outputs(static, rows, capsys)
        assert got == want, fn.__name__
        assert "Tensor" not in want[1]  # (the number run prints a Python number)
        assert len(static.program_cache) == 1


def test_printed_numbers_are_pythons_text(capsys):
    static = d2s.to_static(kept_total)
    static(rt.to_tensor(np.asarray([0.1, 0.2], "float32")))
    assert capsys.readouterr().out == "total: 0;\n[0] [0]\n"
    static = d2s.to_static(running_bonus)
    static(rt.to_tensor(np.asarray([-0.5, -1.0], "float32")))
    assert capsys.readouterr().out == "bonus 1\nbonus=1 scaled=3\n"


def test_a_format_spec_formats_the_number_and_fails_on_the_tensor_as_eager(capsys):
    static = d2s.to_static(formatted_total)
    for fn in (formatted_total, static):
        fn(rt.to_tensor(np.asarray([0.1, 0.2], "float32")))
        assert capsys.readouterr().out == "0.000\n"
        with pytest.raises(TypeError, match="unsupported format string passed to Tensor"):
            fn(rt.to_tensor(np.asarray([1.0, 2.0], "float32")))
    assert len(static.program_cache) == 1
