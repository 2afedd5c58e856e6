"""`return` inside a tensor `while` of a tuple that holds an empty list or dict (a list popped
empty, a log never written): the returned structure is loop state like any other (it raised
"'_retval' is a Python tuple changed inside a loop", naming d2s's own variable)."""
import numpy as np

import d2s
import runtime as rt


def drain_then_search(x, y):
    h = x * 1.0
    pending = [x, y]
    pending.pop(0)
    pending.pop(0)
    k = rt.zeros([])
    while k < rt.abs(x[0]) + 0.5:
        k = k + 1.0
        if y[0] > x[1]:
            return h * k, pending, {}
    return h * 2.0, pending, {}


def ref(x, y):
    k = 0.0
    while k < abs(x[0]) + 0.5:
        k += 1.0
        if y[0] > x[1]:
            return x * k
    return x * 2.0


def test_returned_tuple_with_empty_containers_from_inside_a_tensor_loop():
    sf = d2s.to_static(drain_then_search)
    for xv, yv in (([2.25, 2.25, 0.25], [-1.25, -1.25, 0.75]),
                   ([-2.75, -1.25, -0.25], [-1.25, 1.25, 0.25]),
                   ([0.5, -3.0, 1.0], [2.0, 0.0, 0.0])):
        x, y = np.array(xv, "float32"), np.array(yv, "float32")
        for out in (sf(rt.to_tensor(x), rt.to_tensor(y)),
                    drain_then_search(rt.to_tensor(x), rt.to_tensor(y))):
            h, pending, extra = out
            np.testing.assert_allclose(h.numpy(), ref(x, y), rtol=1e-6)
            assert pending == [] and extra == {}
    assert len(sf.program_cache) == 1
