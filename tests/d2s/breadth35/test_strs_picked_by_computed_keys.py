"""`max(scores, key=scores.get)` over a dict of str keys whose values the converted code
computes (the best expert, metric or label by name), and `sorted(names, key=...)` of strs:
refused with a misleading message ("sorting a list by tensors whose items hold values of
other types, dtypes or shapes at one place (...: a str, a str, a str)"). Now the str the run
picks converts as a str chosen by a tensor `if` does (`branch_strs`): returned (alone or in a
list) the call gives eager's str, `==` follows the run, its text is refused at the line of
the use."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line

NAMES = ["code", "math", "chat"]


def route_by_name(scores, names):
    table = {n: scores[i] for i, n in enumerate(names)}
    best = max(table, key=table.get)
    ranked = sorted(names, key=lambda n: table[n], reverse=True)
    bonus = 1.0 if best == "math" else 0.0
    return best, ranked, bonus, min(table, key=lambda k: table[k].item())


def label_text(scores, names):
    table = dict(zip(names, scores))
    best = max(table, key=table.get)
    return "best=" + best


def _np_route(scores, names):
    order = sorted(range(len(names)), key=lambda i: -scores[i])
    best = names[order[0]]
    return (best, [names[i] for i in order], 1.0 if best == "math" else 0.0,
            names[min(range(len(names)), key=lambda i: scores[i])])


@pytest.mark.parametrize("scores", [[0.1, 0.9, 0.3], [0.8, 0.1, 0.3], [0.2, 0.2, 0.9]])
def test_strs_picked_by_computed_keys_are_eagers(scores):
    static = d2s.to_static(route_by_name)
    args = (rt.to_tensor(np.float32(scores)), NAMES)
    want, got = route_by_name(*args), static(*args)
    assert want == _np_route(scores, NAMES)
    assert got == want
    assert type(got[0]) is str and [type(n) for n in got[1]] == [str] * 3
    assert type(got[2]) is float and type(got[3]) is str
    assert len(static.program_cache) == 1


def test_text_of_a_picked_str_is_refused_at_the_line_of_the_use():
    assert label_text(rt.to_tensor([0.1, 0.9, 0.3]), NAMES) == "best=math"
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(label_text)(rt.to_tensor([0.1, 0.9, 0.3]), NAMES)
    line = label_text.__code__.co_firstlineno + 3
    text = assert_at_user_line(info.value, __file__, line)
    assert "a str picked by sorted/max/min" in text
