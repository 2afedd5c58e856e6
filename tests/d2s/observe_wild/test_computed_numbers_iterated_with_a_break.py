"""A Python list of numbers the program computes (`draft.append(int(t.argmax()))`), iterated
by a `for` whose `break` a tensor decides (speculative decoding's verify loop): the items the
loop hands out stand for Python numbers, so what it appends to another list comes back as
Python ints / floats, as eager's do (they came back as 0-d Tensors after the first item)."""
import numpy as np

import d2s
import runtime as rt

from .helpers import assert_same_leaves


def verify_draft(target, draft_table, start, k):
    draft = []
    cur = start
    for _ in range(k):
        cur = int(draft_table[cur].argmax())
        draft.append(cur)
    accepted = []
    prev = start
    for tok in draft:
        target_tok = int(target[prev].argmax())
        if target_tok != tok:
            accepted.append(target_tok)
            break
        accepted.append(tok)
        prev = tok
    return accepted, len(accepted) - 1


def np_verify_draft(target, draft_table, start, k):
    draft, cur = [], start
    for _ in range(k):
        cur = int(draft_table[cur].argmax())
        draft.append(cur)
    accepted, prev = [], start
    for tok in draft:
        t = int(target[prev].argmax())
        if t != tok:
            accepted.append(t)
            break
        accepted.append(tok)
        prev = tok
    return accepted, len(accepted) - 1


def confident_scores(scores, floor):
    kept = [float(scores[i].max()) for i in range(scores.shape[0])]
    out = []
    for s in kept:
        if s < floor:
            break
        out.append(s * 2)
    return out, sum(out)


CYCLE = np.eye(4, dtype="float32")[[1, 2, 3, 0]]


def test_computed_ints_iterated_with_a_tensor_break_stay_ints():
    converted = d2s.to_static(verify_draft)
    drafts = [CYCLE, CYCLE[[0, 2, 1, 3]], CYCLE[[3, 1, 2, 0]]]  # all, some, none accepted
    lengths = set()
    for draft in drafts:
        args = (rt.to_tensor(CYCLE), rt.to_tensor(draft), 0, 3)
        eager, static = verify_draft(*args), converted(*args)
        ref = np_verify_draft(CYCLE, draft, 0, 3)
        assert eager == ref
        assert_same_leaves(static, eager)
        assert all(type(t) is int for t in static[0])
        lengths.add(len(static[0]))
    assert len(lengths) == 3


def test_computed_floats_iterated_with_a_tensor_break_stay_floats():
    converted = d2s.to_static(confident_scores)
    for scores, floor in [(np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]], "float32"), 0.5),
                          (np.array([[0.9, 0.1], [0.2, 0.3], [0.7, 0.3]], "float32"), 0.5),
                          (np.array([[0.1, 0.1], [0.2, 0.8], [0.7, 0.3]], "float32"), 0.5)]:
        eager = confident_scores(rt.to_tensor(scores), floor)
        static = converted(rt.to_tensor(scores), floor)
        ref = [2 * float(m) for m in scores.max(1)]
        ref = ref[:next((i for i, m in enumerate(scores.max(1)) if m < floor), len(ref))]
        np.testing.assert_allclose(eager[0], ref, rtol=1e-6)
        assert_same_leaves(static, eager)
        assert all(type(s) is float for s in static[0])
        assert type(static[1]) is type(eager[1]) is (float if ref else int)  # (sum([]) is 0)
