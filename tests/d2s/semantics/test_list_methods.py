"""`extend`, `insert`, `clear` and `remove` on a local list in converted code make the list
state of the branch or loop around them, as `append` and `pop` do: a tensor `if` whose
branches leave it with different lengths makes it a tensor array (they were refused), and a
graph loop extends its tensor array by a list. `insert`/`clear`/`remove` on a tensor array
inside a graph loop is a clear error naming the statement."""
import numpy as np
import pytest

import d2s
import runtime as rt


def branchy(x):
    feats = [x * 1.0, x * 2.0]
    if x.sum() > 0:
        feats.extend([x * 3.0, x * 4.0])
        feats.insert(0, x * 0.5)
    else:
        feats.clear()
    return len(feats), (rt.stack(feats).sum(0) if len(feats) > 0 else x * 0.0)


def ref_branchy(x):
    feats = [x * 1.0, x * 2.0]
    if x.sum() > 0:
        feats = [x * 0.5] + feats + [x * 3.0, x * 4.0]
    else:
        feats = []
    return len(feats), (np.stack(feats).sum(0) if feats else x * 0.0)


def drop_first(x):
    parts = [x * 1.0, x * 2.0, x * 3.0]
    first = parts[0]
    if x.mean() > 1.0:
        parts.remove(first)
    return len(parts), rt.concat(parts)


def extend_in_loop(x, n):
    outs = []
    i = 0
    while i < n:
        outs.extend([x * i, x + i])
        i += 1
    return len(outs), rt.stack(outs).sum(0) if len(outs) > 0 else x * 0.0


def test_length_changing_methods_under_a_tensor_if():
    static = d2s.to_static(branchy)
    for xv in ([1.0, 2.0], [-1.0, -2.0]):
        x = np.array(xv, "float32")
        n, total = ref_branchy(x)
        for fn in (branchy, static):
            got_n, got = fn(rt.to_tensor(x))
            assert int(got_n) == n
            np.testing.assert_allclose(got.numpy(), total)
    assert len(static.program_cache) == 1


def test_remove_under_a_tensor_if():
    static = d2s.to_static(drop_first)
    for xv in ([1.0, 2.0], [0.0, 1.0]):
        x = np.array(xv, "float32")
        parts = [x * 1.0, x * 2.0, x * 3.0][1 if x.mean() > 1.0 else 0:]
        for fn in (drop_first, static):
            got_n, got = fn(rt.to_tensor(x))
            assert int(got_n) == len(parts)
            np.testing.assert_allclose(got.numpy(), np.concatenate(parts))


def test_extend_in_a_graph_loop():
    static = d2s.to_static(extend_in_loop)
    x = np.array([1.0, -2.0], "float32")
    for n in (0, 1, 3):
        items = [v for i in range(n) for v in (x * i, x + i)]
        for fn in (extend_in_loop, static):
            got_n, got = fn(rt.to_tensor(x), rt.to_tensor(np.array(n)))
            assert int(got_n) == 2 * n
            np.testing.assert_allclose(got.numpy(), np.stack(items).sum(0) if items else x * 0)


def test_insert_into_a_tensor_array_in_a_graph_loop():
    # (was refused; insert on a tensor array is an array_insert op: test_array_insert_clear.py)
    def grow_front(x, n):
        outs = []
        i = 0
        while i < n:
            outs.insert(0, x * i)
            i += 1
        return outs

    static = d2s.to_static(grow_front)
    x = np.ones(2, "float32")
    for n in (1, 3):
        got = static(rt.to_tensor(x), rt.to_tensor(np.array(n)))
        want = grow_front(rt.to_tensor(x), rt.to_tensor(np.array(n)))
        assert [g.numpy().tolist() for g in got] == [w.numpy().tolist() for w in want]
