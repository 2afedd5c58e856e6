"""`not t` of a one-element tensor (`done = not (tok != eos)`, `empty = not mask.any()`) and
`not lst` of a list the run sizes are Python bools in eager code (`not` calls `bool()`). The
converted call returned 0-d bool Tensors there (returned alone, in a list or in a dict; the
corpus case `paddle_calls.not_of_tensor` compared values only), so `json.dumps`,
`isinstance(v, bool)` or `"%s" % v` behaved differently. Now they come back as Python bools,
and arithmetic with them (`x * done + 1`, `done + 1`) stays eager's."""
import numpy as np
import pytest

import d2s
import runtime as rt


def stop_flags(x, mask, eos):
    done = not (x.argmax() != eos)
    empty = not mask.any()
    scaled = x * done + 1
    return done, empty, scaled, done + 1, [not x.sum() > 0], {"all_pos": not (x.min() <= 0)}


def kept_or_not(x):
    kept = []
    for v in x:
        if v > 0:
            kept.append(v)
    return not kept, len(kept)


def _leaves(v):
    if isinstance(v, (list, tuple)):
        return [leaf for item in v for leaf in _leaves(item)]
    if isinstance(v, dict):
        return [leaf for item in v.values() for leaf in _leaves(item)]
    return [v]


@pytest.mark.parametrize("values,mask,eos", [([0.1, 0.9, 0.3], [False, False, False], 1),
                                             ([-0.5, 0.2, 0.9], [True, False, False], 1)])
def test_not_of_one_element_tensors_is_a_python_bool(values, mask, eos):
    static = d2s.to_static(stop_flags)
    args = (rt.to_tensor(np.float32(values)), rt.to_tensor(mask), eos)
    want, got = stop_flags(*args), static(*args)
    for w, g in zip(_leaves(want), _leaves(got), strict=True):
        assert type(g) is type(w), (w, g)
        if isinstance(w, rt.Tensor):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy())
        else:
            assert g == w
    arr = np.float32(values)
    assert want[0] is bool(arr.argmax() == eos) and want[1] is (not any(mask))


@pytest.mark.parametrize("values", [[1.0, -2.0], [-1.0, -2.0]])
def test_not_of_a_list_the_run_sizes_is_a_python_bool(values):
    static = d2s.to_static(kept_or_not)
    want, got = kept_or_not(rt.to_tensor(values)), static(rt.to_tensor(values))
    assert type(got[0]) is bool and got == want
