"""`int(t)`, `float(t)` and `bool(t)` of a one-element tensor of shape [1] (Paddle's
test_cast.py idiom) are Python numbers in eager code, with no shape: `rt.to_tensor(int(t))` is
a 0-d tensor and `rt.to_tensor([float(t), 2.0])` a vector of 2. Converted code kept the
tensor's shape [1] for the number's stand-in: `rt.to_tensor(b)` came back with shape [1]
(silently), and a list of such numbers failed inside `stack` ("all inputs must have the same
rank"). The stand-in is rank 0, on every path of one program."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def numbers_made_into_tensors(x, gate):
    b = bool(x)
    i = int(x * 10)
    f = float(x)
    if gate.sum() > 0:
        f = f * 2.0
    picks = rt.to_tensor([f, 3.0])
    return rt.to_tensor(b), rt.to_tensor(i), rt.to_tensor(f), picks, rt.full([2], i) + f


def _reference(x, gate):
    f = float(x[0]) * (2.0 if gate.sum() > 0 else 1.0)
    i = int(x[0] * np.float32(10))
    return (np.array(bool(x[0])), np.array(i, "int64"), np.array(f, "float32"),
            np.array([f, 3.0], "float32"), np.full([2], i, "float32") + np.float32(f))


def test_numbers_of_one_element_tensors_have_no_shape():
    static = d2s.to_static(numbers_made_into_tensors)
    for x, gate in ((np.array([0.75], "float32"), np.array([1.0], "float32")),
                    (np.array([0.0], "float32"), np.array([-1.0], "float32")),
                    (np.array([[-2.5]], "float32"), np.array([1.0], "float32"))):
        args = (rt.to_tensor(x), rt.to_tensor(gate))
        want = numbers_made_into_tensors(*args)
        got = static(*(rt.to_tensor(x), rt.to_tensor(gate)))
        assert_same_leaves(got, want)
        for g, r in zip(got, _reference(x.reshape(-1), gate)):
            assert g.shape == list(r.shape)
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-6)
    assert len(static.program_cache) == 2  # (shapes [1] and [1, 1])
