"""`+` on a list that converted code made a tensor array (appended under a tensor `if`) is
Python's list concatenation, found porting Paddle's `test_list.py`: it was traced as the
elementwise `add` (`rt.concat(l + [x])` raised about 0-d tensors, `len(l + l)` an internal
op error). Eager vs static vs NumPy, with inputs that give the arrays other lengths through
one converted program, and the gradient through a concatenation."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def kept(x):
    out = []
    for j in range(3):
        if x.sum() > j:
            out.append(x * j)
    return out


def kept_ref(x):
    return [x * j for j in range(3) if x.sum() > j]


def with_input(x):
    parts = kept(x)
    return rt.concat(parts + [x])


def input_first(x):
    parts = kept(x)
    return rt.concat([x * 2.0] + parts)


def doubled_length(x):
    parts = kept(x)
    both = parts + parts
    return len(both)


def two_arrays(x):
    a, b = kept(x), kept(x * 0.5)
    return rt.stack(a + b)


INPUTS = ([0.25], [1.5], [2.5])


def test_concatenations_against_numpy_through_one_program():
    fns = {with_input: lambda x: np.concatenate(kept_ref(x) + [x]),
           input_first: lambda x: np.concatenate([x * 2.0] + kept_ref(x)),
           two_arrays: lambda x: np.stack(kept_ref(x) + kept_ref(x * 0.5))}
    for fn, ref in fns.items():
        static = d2s.to_static(fn)
        for a in INPUTS:
            x = np.array(a, "float32")
            if fn is two_arrays and not kept_ref(x * 0.5) and not kept_ref(x):
                continue
            np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), ref(x), rtol=1e-6)
            np.testing.assert_allclose(fn(rt.to_tensor(x)).numpy(), ref(x), rtol=1e-6)
        assert len(static.program_cache) == 1


def test_length_of_an_array_added_to_itself():
    static = d2s.to_static(doubled_length)
    for a in INPUTS:
        x = np.array(a, "float32")
        want = 2 * len(kept_ref(x))
        assert doubled_length(rt.to_tensor(x)) == want
        assert int(static(rt.to_tensor(x))) == want


def test_gradient_through_a_concatenation():
    static = d2s.to_static(with_input)
    a = np.array([1.5], "float64")
    x = rt.to_tensor(a, stop_gradient=False)
    (static(x) ** 2).sum().backward()
    want = numeric_grad(lambda v: float((np.concatenate(kept_ref(v) + [v]) ** 2).sum()), a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5)
