"""Found by the state generator (session 21, seed 34002: 3 internal errors in 625; issue 35's
"NameError: name '_if_true_6' is not defined" from generated code). Nested tensor `if`s with
early returns in the `else` of another: flattening the generated branch functions
(`pyct/hoist.py`) moved a def out of the function that holds it although it reads a def that
had to stay there (one that reads the user's `h`) through a third def, so the moved one named
a function its new scope does not have. The filter now runs to a fixed point."""
import numpy as np

import d2s
import runtime as rt


def nested_returns(x, y):
    h = x * 1.0
    lst = [x]
    if rt.max(y) < 1.5:
        return h, lst
    if y[0] > x[1]:
        h = h + 1.0
    else:
        if rt.mean(x) > 0.0:
            return h, lst
        if rt.mean(x) > 0.0:
            if rt.mean(x) > 0.0:
                return h, lst
            lst.append(h + 1.0)
    h = h * 2.0
    return h, lst


def test_every_path_through_one_program():
    static = d2s.to_static(nested_returns)
    cases = [([1.25, 0.75, 0.25], [1.25, 1.25, 2.25]), ([-1.0, 0.5, -2.0], [0.5, 0.5, 0.5]),
             ([1.0, 3.0, 1.0], [2.0, 0.0, 2.0]), ([-1.0, -3.0, -1.0], [2.0, 0.0, 2.0])]
    for xv, yv in cases:
        x, y = rt.to_tensor(np.array(xv, "float32")), rt.to_tensor(np.array(yv, "float32"))
        (he, le), (hs, ls) = nested_returns(x, y), static(x, y)
        np.testing.assert_allclose(hs.numpy(), he.numpy())
        assert (hs.dtype, hs.stop_gradient) == (he.dtype, he.stop_gradient)
        assert type(ls) is type(le) is list and len(ls) == len(le)
        for a, b in zip(ls, le, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy())
            assert (a.dtype, a.stop_gradient) == (b.dtype, b.stop_gradient)
    assert len(static.program_cache) == 1
