"""The text of a str a tensor `if` chose (`mode = "eval"` on one path) follows the run where
the text is used to make other strs, numbers or bools: `mode.upper()`, `"[" + mode + "]"`,
an f-string outside `print`, `"%s" % mode`, `str(mode)`, `len(mode)`, `mode.startswith(..)`,
`mode[0]`, `"a" in mode`: each is made for every str the run may choose and the program picks
the run's (one program serves every input). Returned, they are eager's Python values (str,
int, bool); printed, eager's text; a tensor `if` on them runs as eager's. Before, each was
refused at the line ("... is used as text"). A use that raises for one of the strs raises
eager's error on the runs that choose it. A use whose result has another type per str (a
list from `split`), or an order that differs by the str (`sorted`, `max`: Python takes its
truth) stays refused, at the line."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

ROWS = ([1.0, 2.0, 3.0], [-1.0, -2.0, 0.5], [0.1, 0.2, 9.0], [-4.0, 0.5, 0.5])


def _x(row):
    return rt.to_tensor(np.asarray(row, "float32"))


class Block(rt.nn.Layer):
    """A block that reports the path it took, as monitoring code does."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.last_tag = None

    def forward(self, x):
        h = self.fc(x)
        act = "relu"
        if h.mean() < 0:
            act = "tanh"
        if h.max() > 4.0:  # (a second chosen str: their combinations)
            size = "big"
        else:
            size = "small"
        h = rt.tanh(h) if act.startswith("t") else rt.nn.functional.relu(h)
        tag = f"{act}/{size}".upper()
        self.last_tag = tag  # (kept where the caller sees it: the run's str)
        print(f"block: {act} ({len(size)} chars)")
        info = {"tag": tag, "name": "%s-%s" % (act, size), "n": len(act + size),  # noqa: UP031
                "relu": act == "relu", "first": act[0] + size[:2], "before": act < "z"}
        return h, info


def _reference(fc, row):
    h = np.asarray(row, "float32") @ fc.weight.numpy() + fc.bias.numpy()
    act = "tanh" if h.mean() < 0 else "relu"
    size = "big" if h.max() > 4.0 else "small"
    return act, size


def test_a_layers_text_of_its_chosen_strs_follows_the_run(capsys):
    rt.seed(11)
    eager, conv = Block(), Block()
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    seen = set()
    for row in ROWS + ([9.0, 9.0, 9.0], [-9.0, -9.0, -9.0]):
        want = eager(_x(row))
        printed = capsys.readouterr().out
        got = static(_x(row))
        assert capsys.readouterr().out == printed
        assert_same_leaves(got, want)
        assert type(got[1]["n"]) is int and type(got[1]["relu"]) is bool
        assert conv.last_tag == eager.last_tag and type(conv.last_tag) is str
        act, size = _reference(eager.fc, row)
        assert got[1]["tag"] == f"{act}/{size}".upper()
        seen.add((act, size))
    assert len(seen) >= 3
    assert len(static.forward.program_cache) == 1


def describe(x, prefix):
    mode = "train"
    if x.sum() > 0:
        mode = "eval"
    label = prefix + ":" + str(mode)  # (a Python str argument beside it)
    scale = 2.0 if label.endswith("eval") else 0.5
    return x * scale, label, repr(mode), format(mode, ">6"), mode * 2, mode.find("a")


@pytest.mark.parametrize("prefix", ["run", "step"])
def test_a_function_of_a_chosen_str_and_a_python_str(prefix):
    static = d2s.to_static(describe)
    for row in ROWS:
        got, want = static(_x(row), prefix), describe(_x(row), prefix)
        assert_same_leaves(got, want)
        x = np.asarray(row, "float32")
        np.testing.assert_allclose(got[0].numpy(), x * (2.0 if x.sum() > 0 else 0.5))


def same_length(x):
    mode = "test"
    if x.mean() > 0:
        mode = "eval"
    return x, len(mode), bool(mode), "t" in mode  # (equal for both strs: Python values)


def test_text_equal_for_every_str_is_that_python_value():
    static = d2s.to_static(same_length)
    for row in ROWS:
        assert_same_leaves(static(_x(row)), same_length(_x(row)))


def contains(x, part):
    mode = "train"
    if x.sum() > 0:
        mode = "eval"
    return part in mode, mode in "training mode", mode in ("eval", "test")


def test_in_of_a_chosen_str_follows_the_run():
    static = d2s.to_static(contains)
    for row in ROWS:
        for part in ("a", "r"):
            assert_same_leaves(static(_x(row), part), contains(_x(row), part))


def raises_for_one(x):
    mode = "train"
    if x.sum() > 0:
        mode = "eval"
    return mode.index("r")  # ("eval" has no "r": eager raises on those runs only)


def ordered(x):
    mode = "train"
    if x.sum() > 0:
        mode = "eval"
    return sorted([mode, "m"])


def test_an_order_that_differs_by_the_str_is_refused_at_the_line():
    assert ordered(_x(ROWS[0])) == ["eval", "m"]
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(ordered)(_x(ROWS[0]))
    assert 'sorted([mode, "m"])' in str(info.value)


def test_text_that_raises_for_one_str_raises_on_those_runs_only():
    static = d2s.to_static(raises_for_one)
    assert static(_x(ROWS[1])) == raises_for_one(_x(ROWS[1])) == 1
    for fn in (raises_for_one, static):  # ("eval": eager's ValueError, when the program runs)
        with pytest.raises(ValueError, match="substring not found"):
            fn(_x(ROWS[0]))


