"""`sep.join(...)` of strs whose count a tensor decides (an OCR decoder's
`"".join(CHARSET[int(c)] for c in ids)`) in one branch of a tensor `if`, and a Python str in
the other (`if chars.shape[0] == 0: return "", 0.0`; corpus case
wild8_perception.ctc_greedy_text): the join alone converted (the call gives the text), but
beside the str it was refused: `ConversionError: the returned value is a string chosen by a
tensor condition (...): '' in the if branch, a str read from a list of str whose length
depends on a tensor in the else branch`. The `if` now gives out an array of str ids (the str
as the array of its one id) and the call gives the run's text; two joins by one separator
meet the same way. Joins by different separators stay refused at the `if`."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line

CHARSET = "-abcdefgh"


def _ids(*ids):
    return rt.to_tensor(np.array(ids, np.int64))


def _np_text(ids, blank="<blank>"):
    chars = [CHARSET[i] for i in ids if i != 0]
    return "".join(chars) if chars else blank


def decode(ids):
    chars = ids.masked_select(ids != 0)
    if chars.shape[0] == 0:
        return "<blank>", 0
    return "".join(CHARSET[int(c)] for c in chars), int(chars.shape[0])


PATHS = [(1, 2, 0, 3), (0, 0, 0, 0), (0, 5, 0, 0), (8, 7, 6, 5)]


def test_a_join_or_a_str_returned():
    static = d2s.to_static(decode)
    for ids in PATHS:
        want = decode(_ids(*ids))
        got = static(_ids(*ids))
        assert got == want == (_np_text(ids), sum(i != 0 for i in ids))
        assert type(got[0]) is str and type(got[1]) is int
    assert len(static.program_cache) == 1


class Result:
    def __init__(self):
        self.text = None
        self.n = 0


def decode_into(ids, out, sep):
    """The text kept on an argument object and in a dict, joined by a separator, with a
    nested tensor `if` and `len()` of the text."""
    picked = ids.masked_select(ids > 0)
    if picked.shape[0] > 0:
        if picked.max() > 6:
            text = sep.join(CHARSET[int(c)] for c in picked)
        else:
            text = "low"
    else:
        text = ""
    out.text = text
    out.n += 1
    return {"text": text, "length": len(text)}


@pytest.mark.parametrize("sep", ["", "-", ", "])
def test_kept_on_an_object_in_a_dict_and_nested(sep):
    static = d2s.to_static(decode_into)
    for ids in [(1, 7, 0), (0, 0, 0), (1, 2, 3), (8, 0, 8)]:
        picked = [i for i in ids if i > 0]
        text = (sep.join(CHARSET[i] for i in picked) if max(picked) > 6 else "low") \
            if picked else ""
        for fn in (decode_into, static):
            out = Result()
            got = fn(_ids(*ids), out, sep)
            assert got == {"text": text, "length": len(text)}
            assert type(got["length"]) is int
            assert out.text == text and out.n == 1
    assert len(static.program_cache) == 1


def two_joins(ids):
    """Both branches join, one reversed: two arrays of different lengths, one separator."""
    kept = ids.masked_select(ids > 0)
    if kept.sum() > 10:
        text = " ".join(CHARSET[int(c)] for c in kept)
    else:
        text = " ".join(CHARSET[int(c)] for c in kept.flip([0]))
    return text


def test_two_joins_by_one_separator():
    static = d2s.to_static(two_joins)
    for ids in [(1, 2, 0, 3), (8, 7, 0, 0), (0, 0, 0, 0)]:
        picked = [CHARSET[i] for i in ids if i > 0]
        text = " ".join(picked if sum(i for i in ids if i > 0) > 10 else picked[::-1])
        assert two_joins(_ids(*ids)) == static(_ids(*ids)) == text


def two_separators(ids):
    kept = ids.masked_select(ids > 0)
    if kept.sum() > 10:
        text = " ".join(CHARSET[int(c)] for c in kept)
    else:
        text = "-".join(CHARSET[int(c)] for c in kept)
    return text


def test_joins_by_two_separators_are_refused_at_the_if():
    static = d2s.to_static(two_separators)
    with pytest.raises(d2s.ConversionError) as info:
        static(_ids(1, 2, 3))
    line = two_separators.__code__.co_firstlineno + 2
    text = assert_at_user_line(info.value, __file__, line)
    assert "'text' is a string chosen by a tensor condition" in text
    assert ("the text ' '.join() makes of a list of str whose length depends on a tensor in "
            "the if branch, the text '-'.join() makes") in text
