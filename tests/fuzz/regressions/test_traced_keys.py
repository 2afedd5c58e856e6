"""Dicts and sets given a key (an element) that the converted code computed (`int(t)`), found
by extending the observe fuzzer to containers keyed by traced values (issue 33): eager Python
keys them by the number; a program cannot, so it must never leave the trace's value where
the caller can reach it, nor read a stale item silently."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import INTERNAL

# argmax 2, then 0: the two calls would set different keys
LOGITS = [[0.1, 0.2, 0.9], [1.5, -0.3, 0.2]]


class Book:
    """What a training loop keeps between steps: the last score per label, the labels seen."""

    def __init__(self):
        self.last_score = {}
        self.labels = set()


def remember_score(logits, book):
    label = int(logits.argmax())
    book.last_score[label] = float(logits.max())
    return logits * 2.0


def remember_label(logits, book):
    book.labels.add(int(logits.argmax()))
    return logits * 2.0


@pytest.mark.parametrize("fn, place", [(remember_score, "book.last_score"),
                                       (remember_label, "book.labels")])
def test_computed_key_of_a_callers_container_is_refused(fn, place):
    eager_book, static_book = Book(), Book()
    want = [fn(rt.to_tensor(v), eager_book).numpy() for v in LOGITS]
    np.testing.assert_allclose(want[0], np.array(LOGITS[0]) * 2.0, rtol=1e-6)
    assert {2, 0} <= set(eager_book.last_score or eager_book.labels)
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(fn)(rt.to_tensor(LOGITS[0]), static_book)
    text = str(info.value)
    assert "value computed by the converted code as a " in text and place in text, text
    assert "test_traced_keys.py" in text and not INTERNAL.search(text), text
    # the caller's containers are as before the call: no graph value left in them
    assert static_book.last_score == {} and static_book.labels == set()


def pick_weights(logits):
    table = {0: 0.5, 1: 0.25, 2: 1.0}
    table[int(logits.argmax())] = 2.0
    return logits * table[0] + table[2]


def test_item_set_under_a_computed_key_then_read_by_a_python_key():
    static = d2s.to_static(pick_weights)
    for v in LOGITS:
        x = np.array(v)
        table = {0: 0.5, 1: 0.25, 2: 1.0}
        table[int(x.argmax())] = 2.0
        want = x * table[0] + table[2]
        np.testing.assert_allclose(pick_weights(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
        try:
            got = static(rt.to_tensor(v))
        except d2s.ConversionError:
            continue  # (a clear refusal would do too)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
