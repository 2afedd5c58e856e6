"""A str that differs between the branches of a tensor `if` (a mode, a label, a status
returned beside tensors) converts (issue 35; it was refused: "'mode' is a string chosen by a
tensor condition"): the `if` gives out the str's id, `==` / `!=` / `in` with strs, a later
tensor `if` on it, printing it (also in an f-string inside `print`) and returning it (also in
a tuple or dict) follow the run; its text is refused at the line of the use.

Eager vs static through one program, inputs taking each branch."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

from .messages import assert_at_user_line
from .test_small_refusals import line_of
from .test_str_lists_sized_by_tensors import picked_by_a_tensor  # (an item a tensor if picks)

ROWS = ([1.0, 2.0, 3.0], [-1.0, -2.0, 0.5], [0.1, 0.2, 9.0])


class Gate(rt.nn.Layer):
    """A layer reporting which path it took, as monitoring code does."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        status = "skip"
        if h.mean() > 0:
            h = rt.nn.functional.relu(h)
            status = "relu"
        return h, {"status": status, "active": status != "skip"}


def classify(x):
    kind = "small" if x.sum() < 3 else "big"
    if x.max() > 5:
        kind = "huge"
    scale = 2.0 if kind in ("big", "huge") else 1.0
    return x * scale, kind, (kind == "huge", kind)


def last_positive(x):
    name = "none"
    for i in range(3):
        if x[i] > 0:
            name = "first" if i == 0 else "later"
    return name


def logged(x):
    level = "low"
    if x.sum() > 0:
        level = "high"
    print("level:", level)
    print(f"[{level}] done")
    return x


def shouted(x):
    level = "low"
    if x.sum() > 0:
        level = "high"
    return level.upper()


def split_up(x):
    level = "very-low"
    if x.sum() > 0:
        level = "high"
    return level.split("-")


def _x(row):
    return rt.to_tensor(np.asarray(row, "float32"))


@pytest.mark.parametrize("fn", [classify, picked_by_a_tensor, last_positive])
def test_chosen_strs_follow_the_run(fn):
    static = d2s.to_static(fn)
    for row in ROWS:
        assert_same_leaves(static(_x(row)), fn(_x(row)))
    assert len(static.program_cache) == 1


def test_a_layer_reports_the_path_it_took():
    rt.seed(3)
    eager = Gate()
    static = d2s.to_static(Gate())
    static.set_state_dict(eager.state_dict())
    seen = set()
    for row in ROWS + ([-5.0, -5.0, -5.0],):
        got, want = static(_x(row)), eager(_x(row))
        assert_same_leaves(got, want)
        seen.add(want[1]["status"])
        ref = np.asarray(row, "float32") @ eager.fc.weight.numpy() + eager.fc.bias.numpy()
        np.testing.assert_allclose(got[0].numpy(), np.maximum(ref, 0) if ref.mean() > 0
                                   else ref, rtol=1e-5, atol=1e-6)
    assert seen == {"skip", "relu"}


def test_printed_as_eager(capsys):
    static = d2s.to_static(logged)
    for row in ROWS[:2]:
        logged(_x(row))
        want = capsys.readouterr().out
        static(_x(row))
        assert capsys.readouterr().out == want
    assert want == "level: low\n[low] done\n"


def test_its_text_follows_the_run():
    # (its text was refused at the line; tests/d2s/observe_state/test_text_of_chosen_strs.py)
    static = d2s.to_static(shouted, full_graph=True)
    for row in ROWS:
        assert static(_x(row)) == shouted(_x(row))


def test_text_of_other_types_per_str_is_refused_at_the_line():
    assert split_up(_x(ROWS[0])) == ["high"]
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(split_up, full_graph=True)(_x(ROWS[0]))
    text = assert_at_user_line(info.value, __file__, line_of(split_up, 'level.split("-")'))
    assert "str.split() of a str chosen by an if whose condition is a tensor gives list" in text
