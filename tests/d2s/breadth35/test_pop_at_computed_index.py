"""`lst.pop(i)` of a Python list of tensors at an index the program computes (a KV / frame
cache evicting its least useful entry: `cache.pop(n_sink + int(scores.argmin()))`): it was
refused ("a value computed by the converted program indexes a Python container"). Which items
stay only the run decides, so the list becomes a tensor array, rebound to its name; `len`,
`stack`, later appends and pops under tensor conditions follow the run. A list another
reference holds (the caller's), or whose items cannot be one array, is refused at the user's
line. Eager vs static vs NumPy over inputs that evict different entries, through one
program."""
import numpy as np
import pytest

import d2s
import runtime as rt

from tests.d2s.observe_wild.helpers import assert_same_leaves


def evicting_cache(frames, usefulness, budget):
    cache, scores = [], []
    evicted = []
    for t in range(frames.shape[0]):
        cache.append(frames[t] * 2.0)
        scores.append(usefulness[t])
        if len(cache) > budget:
            drop = 1 + int(rt.stack(scores[1:]).argmin())  # (entry 0: an attention sink)
            old = cache.pop(drop)
            evicted.append(old)
            scores.pop(drop)
    return rt.stack(cache), len(cache), rt.stack(evicted).sum(0)


def evicting_ref(frames, usefulness, budget):
    cache, scores, evicted = [], [], []
    for t in range(frames.shape[0]):
        cache.append(frames[t] * 2.0)
        scores.append(usefulness[t])
        if len(cache) > budget:
            drop = 1 + int(np.argmin(scores[1:]))
            evicted.append(cache.pop(drop))
            scores.pop(drop)
    return np.stack(cache), len(cache), np.stack(evicted).sum(0)


def test_a_cache_evicting_at_a_computed_index():
    converted = d2s.to_static(evicting_cache)
    frames = np.arange(10, dtype="float32").reshape(5, 2)
    kept = set()
    for usefulness in ([9, 1, 2, 3, 4], [9, 5, 4, 3, 0.5], [0, 3, 1, 4, 2]):
        u = np.asarray(usefulness, "float32")
        want = evicting_cache(rt.to_tensor(frames), rt.to_tensor(u), 3)
        got = converted(rt.to_tensor(frames), rt.to_tensor(u), 3)
        ref = evicting_ref(frames, u, 3)
        np.testing.assert_allclose(want[0].numpy(), ref[0])
        np.testing.assert_allclose(want[2].numpy(), ref[2])
        assert want[1] == ref[1] == 3
        assert_same_leaves(got, want)
        kept.add(tuple(ref[0][:, 0]))
    assert len(kept) == 3
    assert len(converted.program_cache) == 1


def pop_argument(cache, scores):
    return cache.pop(int(scores.argmin()))


def pop_numbers(x):
    ids = [3, 1, 2]
    ids.pop(int(x.argmin()))
    return ids


@pytest.mark.parametrize("fn, args, match", [
    (pop_argument, lambda: ([rt.ones([2]), rt.zeros([2])], rt.to_tensor([1.0, 0.0])),
     "the caller's list"),
    (pop_numbers, lambda: (rt.to_tensor([1.0, 0.0, 2.0]),), "not tensors of one shape"),
])
def test_pops_that_cannot_be_an_array_are_refused_at_the_line(fn, args, match):
    fn(*args())  # eager runs
    with pytest.raises(d2s.ConversionError, match=match) as e:
        d2s.to_static(fn)(*args())
    assert "list.pop() (File" in str(e.value) and "test_pop_at_computed_index.py" in str(e.value)
