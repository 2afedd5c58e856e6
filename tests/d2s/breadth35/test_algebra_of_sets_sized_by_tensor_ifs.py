"""Set algebra of a set whose items a tensor `if` decides (issue 35): a tracker of the
classes or stages seen, `seen.add(...)` under tensor conditions, then `seen - {...}`,
`seen & KNOWN`, `seen ^ {...}`, `{...} | seen`, `seen.difference(...)`, `KNOWN - seen`,
algebra of those results, and comparisons (`seen <= KNOWN`, `seen == {...}`,
`seen.isdisjoint(...)`). Each was refused ("reads the set seen, whose items the branches of
an if ..."); now each item of the result has its presence computed from the operands'
(`flagged_algebra`), so `len()`, `in` and `bool()` of it follow the run, and a comparison
is a Python bool per run. Eager vs static vs
a NumPy-side reference, over inputs taking each path through one program; reads that need
the items themselves (`sorted()`) stay refused at their line."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line

KNOWN = frozenset({"cls", "box", "mask"})
INPUTS = [np.array(v, "float32") for v in
          ([1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], [0.2, -0.9, 0.3], [0.9, -0.5, -0.6],
           [-0.2, 0.8, 0.1])]


def _stages(x):
    seen = {"cls"}
    if x.mean() > 0:
        seen.add("box")
    if x[0] > 0.5:
        seen.add("mask")
    if x[1] > 0.5:
        seen.add("extra")
    return seen


def algebra(x):
    seen = _stages(x)
    new = seen - {"cls"}
    common = seen & KNOWN
    flipped = seen ^ {"box", "kpt"}
    both = {"depth"} | seen
    missing = KNOWN - seen
    rest = seen.difference({"mask"}).union({"kpt"})
    again = (seen - {"cls"}) & {"mask", "extra"}
    y = x * len(new) + len(missing)
    return (y, len(common), "box" in flipped, "kpt" in flipped, len(flipped), len(both),
            bool(missing), "mask" in missing, len(rest), len(again), bool(again))


def reference(x):
    seen = {"cls"}
    if x.mean() > 0:
        seen.add("box")
    if x[0] > 0.5:
        seen.add("mask")
    if x[1] > 0.5:
        seen.add("extra")
    new, missing, flipped = seen - {"cls"}, KNOWN - seen, seen ^ {"box", "kpt"}
    again = (seen - {"cls"}) & {"mask", "extra"}
    return (x * len(new) + len(missing), len(seen & KNOWN), "box" in flipped,
            "kpt" in flipped, len(flipped), len({"depth"} | seen), bool(missing),
            "mask" in missing, len(seen.difference({"mask"}).union({"kpt"})), len(again),
            bool(again))


def test_algebra_of_the_set_follows_the_run():
    static = d2s.to_static(algebra)
    for x in INPUTS:
        want, got, ref = algebra(rt.to_tensor(x)), static(rt.to_tensor(x)), reference(x)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
        np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-6)
        assert (got[0].dtype, got[0].stop_gradient) == (want[0].dtype, want[0].stop_gradient)
        assert got[1:] == want[1:] == ref[1:]
        assert [type(v) for v in got[1:]] == [type(v) for v in want[1:]]
    assert len(static.program_cache) == 1


def pairs(x):
    seen = {(0, 0)}
    if x.sum() > 0:
        seen.add((0, 1))
    if x[0] > 0.5:
        seen.add((1, 1))
    return x.sum() + len(seen - {(0, 0)}) * 10 + len({(0, 1), (1, 1)} - seen)


def test_tuples_of_python_numbers():
    static = d2s.to_static(pairs)
    for x in INPUTS:
        want, got = pairs(rt.to_tensor(x)), static(rt.to_tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy())
    assert len(static.program_cache) == 1


def compared(x):
    seen = _stages(x)
    return (seen.isdisjoint({"mask", "kpt"}), seen.issubset(KNOWN), seen.issuperset({"box"}),
            seen <= KNOWN | {"extra"}, seen < KNOWN, seen == {"cls"}, seen != {"cls", "box"},
            {"cls", "box"} <= seen, seen > {"cls"}, KNOWN >= seen, {"depth"}.isdisjoint(seen))


def compared_reference(x):
    seen = {"cls"} | ({"box"} if x.mean() > 0 else set()) | (
        {"mask"} if x[0] > 0.5 else set()) | ({"extra"} if x[1] > 0.5 else set())
    return (seen.isdisjoint({"mask", "kpt"}), seen.issubset(KNOWN), seen.issuperset({"box"}),
            seen <= KNOWN | {"extra"}, seen < KNOWN, seen == {"cls"}, seen != {"cls", "box"},
            {"cls", "box"} <= seen, seen > {"cls"}, KNOWN >= seen, {"depth"}.isdisjoint(seen))


def test_comparisons_of_the_set_follow_the_run():
    """`isdisjoint`, `issubset`, `issuperset`, `<=`, `<`, `==`, `!=`, `>`, `>=`: a Python
    bool per run, from the items' presence flags."""
    static = d2s.to_static(compared)
    for x in INPUTS:
        want, got = compared(rt.to_tensor(x)), static(rt.to_tensor(x))
        assert got == want == compared_reference(x)
        assert all(type(v) is bool for v in got)
    assert len(static.program_cache) == 1


def listed(x):
    seen = _stages(x)
    return x * len(sorted(seen - {"cls"}))


def test_reading_the_items_of_the_result_is_refused_at_its_line():
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(listed)(rt.to_tensor(INPUTS[0]))
    text = assert_at_user_line(info.value, __file__, listed.__code__.co_firstlineno + 2)
    assert "sorted()" in text and "reads the set made from seen, whose items the branches" \
        " of an if" in text, text
