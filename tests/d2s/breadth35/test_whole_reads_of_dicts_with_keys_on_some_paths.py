"""A loss or metrics dict whose key a tensor `if` (or a graph loop) sets on some paths only,
read whole by something that iterates its keys in Python (issue 33/35): `dict.fromkeys(d)`,
`",".join(d)`, a set comprehension, `[*d]`, `f(*d)`, `map`/`filter`/`iter`,
`set().union(d)`, `s.update(d)`, `names.extend(d)`, `d.keys().isdisjoint(t)`, `other -
d.keys()`. Each read every path's keys while tracing: the program kept the key on the runs
without it (`len(dict.fromkeys(d))` one too many), silently. Now each is refused at the
user's line; `rt.stack(d.values())` stacks the values present on this run, and a dict
comprehension with one `for` has the keys present on this run (eager vs static vs NumPy
through one program)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line
from tests.d2s.observe_wild.helpers import assert_same_leaves

F = rt.nn.functional
SMALL, BIG = np.array([0.5, 0.2], "float32"), np.array([0.5, 3.0], "float32")


def _losses(x):
    losses = {"l1": x.abs().mean()}
    if x.max() > 1:
        losses["aux"] = (x * x).mean()
    losses["reg"] = x.sum() * 0.1
    return losses


def _grown(x):
    stats = {"n": x.sum()}
    i = 0
    while i < x.shape[0]:
        if x[i] > 1:
            stats["big"] = x[i]
        i += 1
    return stats


def zeros_like_keys(x):
    totals = dict.fromkeys(_losses(x), 0.0)
    return len(totals)


def joined_names(x):
    return ",".join(_losses(x))


def items_as_floats(x):
    losses = _losses(x)
    return {k: v * 2.0 for k, v in losses.items()}


def name_set(x):
    return len({k.upper() for k in _losses(x)})


def unpacked(x):
    names = [*_losses(x)]
    return len(names)


def logged(x):
    def log(*names):
        return len(names)
    return log(*_losses(x))


def mapped(x):
    return len(list(map(str.upper, _losses(x))))


def union(x):
    return len(set().union(_losses(x)))


def updated(x):
    seen = {"step"}
    seen.update(_losses(x))
    return len(seen)


def extended(x):
    names = ["step"]
    names.extend(_losses(x))
    return len(names)


def disjoint(x):
    return _losses(x).keys().isdisjoint({"aux"})


def missing(x, wanted=frozenset({"l1", "aux"})):
    return len(wanted - _losses(x).keys())


def grown_fromkeys(x):
    return len(dict.fromkeys(_grown(x)))


def grown_comprehension(x):
    return len({k: 1 for k in _grown(x)})


REFUSED = [zeros_like_keys, joined_names, name_set, unpacked, logged, mapped, union, updated,
           extended, disjoint, missing, grown_fromkeys]


@pytest.mark.parametrize("fn", [items_as_floats, grown_comprehension], ids=lambda f: f.__name__)
def test_dict_comprehensions_follow_the_run(fn):
    """Refused until a dict comprehension with one `for` converted as the `for` statement
    over the dict does (each key's pair under its presence flag: `comp_arrays.dict_comp`)."""
    static = d2s.to_static(fn)
    for x in (SMALL, BIG, SMALL):
        want, got = fn(rt.to_tensor(x)), static(rt.to_tensor(x))
        assert_same_leaves(got, want)
    assert len(static.program_cache) == 1


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_reads_of_every_paths_keys_are_refused_at_the_users_line(fn):
    """Eager code gives another answer on each path; the program would give one."""
    small, big = fn(rt.to_tensor(SMALL)), fn(rt.to_tensor(BIG))
    assert small != big
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(rt.to_tensor(SMALL))
    code = fn.__code__
    lines = range(code.co_firstlineno, code.co_firstlineno + 8)
    text = next((assert_at_user_line(info.value, __file__, n) for n in lines if
                 f'File "{__file__}", line {n}' in str(info.value)), None)
    assert text is not None, str(info.value)
    assert "exists only where a tensor `if` set it" in text


def stacked(x):
    losses = _losses(x)
    parts = rt.stack(losses.values())
    return parts.sum(), parts.shape[0], len(losses)


def _ref(x):
    parts = [np.abs(x).mean()]
    if x.max() > 1:
        parts.append((x * x).mean())
    parts.append(x.sum() * 0.1)
    return np.sum(parts), len(parts)


def test_stack_of_the_values_follows_the_run():
    static = d2s.to_static(stacked)
    for x in (SMALL, BIG, SMALL):
        want, got = stacked(rt.to_tensor(x)), static(rt.to_tensor(x))
        assert_same_leaves(got, want)
        total, n = _ref(x)
        assert got[1:] == (n, n)
        np.testing.assert_allclose(got[0].numpy(), total, rtol=1e-5)
    assert len(static.program_cache) == 1


class Logger:
    def __init__(self):
        self.history = []

    def step(self, x):
        losses = _losses(x)
        self.history.append(losses)  # (stored, not read: the keys of the run after the call)
        merged = dict(losses)
        merged.update(losses)
        return len(merged), "aux" in merged


def test_storing_or_copying_the_dict_still_converts():
    eager, static_logger = Logger(), Logger()
    static = d2s.to_static(static_logger.step)
    for x in (SMALL, BIG, SMALL):
        assert static(rt.to_tensor(x)) == eager.step(rt.to_tensor(x))
    assert [list(d) for d in static_logger.history] == [list(d) for d in eager.history] == [
        ["l1", "reg"], ["l1", "aux", "reg"], ["l1", "reg"]]
