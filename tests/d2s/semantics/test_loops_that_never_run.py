"""Graph loops that run zero times, found porting Paddle's dygraph_to_static tests
(`test_loop.py`, `test_for_enumerate.py`): what a name holds after a loop whose body never
ran is what eager code holds. A name first bound inside the loop is unbound there (reading it
raises UnboundLocalError when the program runs; it read zeros); a Python number the body
makes a tensor of another shape is still the number in eager code, which the program cannot
give, so reading it raises a TypeError naming the loop (a number filled the tensor: a sum
after the loop gave 24 for eager's 4); a loop whose only state is its index runs (it raised
an internal structure error). Eager vs static vs NumPy through one converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def last_step(x, n):
    for i in range(n):
        y = x * i
    return y


def last_step_while(x, n):
    k = rt.zeros([], "int64")
    while k < n:
        z = x + k
        k = k + 1
    return z


class LastIndex(rt.nn.Layer):
    def forward(self, x, n):
        for i in range(n):
            x = x + 1.0
        return x * i


@pytest.mark.parametrize("fn", [last_step, last_step_while, LastIndex()])
def test_a_name_first_bound_in_the_loop_is_unbound_after_no_iteration(fn):
    static = d2s.to_static(fn)
    x = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    for n in (3, 1):
        nn = rt.to_tensor(np.int64(n))
        np.testing.assert_allclose(static(x, nn).numpy(), fn(x, nn).numpy())
    zero = rt.to_tensor(np.int64(0))
    with pytest.raises(UnboundLocalError):
        fn(x, zero)
    with pytest.raises(UnboundLocalError, match="where it is not associated with a value"):
        static(x, zero)
    cache = static.forward.program_cache if isinstance(fn, rt.nn.Layer) else \
        static.program_cache
    assert len(cache) == 1


def test_gradient_of_a_name_bound_in_the_loop():
    static = d2s.to_static(last_step)
    a = np.array([0.5, -1.5], "float64")
    x = rt.to_tensor(a, stop_gradient=False)
    static(x, rt.to_tensor(np.int64(4))).sum().backward()
    want = numeric_grad(lambda v: float((v * 3).sum()), a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


def grid(i):
    b = 4
    while i < 10:
        b = rt.zeros([2, 3]) + 1.0
        i += 1
    return rt.sum(b + rt.zeros([1]))


def running_sum(x, n):
    h = 0
    for _ in range(n):
        h = h + x
    return h * 2


def test_a_number_made_a_tensor_of_another_shape_after_no_iteration():
    static = d2s.to_static(grid)
    assert static(rt.to_tensor(np.array([7], "int32"))).numpy() == 6.0
    assert grid(rt.to_tensor(np.array([12], "int32"))).numpy() == 4.0  # eager: the number
    with pytest.raises(TypeError, match="'b' is the Python number 4 before a loop") as e:
        static(rt.to_tensor(np.array([12], "int32")))
    assert "while i < 10:" in str(e.value)


def test_a_running_sum_from_zero_through_one_program():
    static = d2s.to_static(running_sum)
    a = np.array([1.0, 2.0, 3.0], "float32")
    x = rt.to_tensor(a)
    for n in (1, 4):
        nn = rt.to_tensor(np.int64(n))
        np.testing.assert_allclose(static(x, nn).numpy(), a * n * 2)
        np.testing.assert_allclose(running_sum(x, nn).numpy(), a * n * 2)
    assert running_sum(x, rt.to_tensor(np.int64(0))) == 0
    with pytest.raises(TypeError, match="'h' is the Python number 0"):
        static(x, rt.to_tensor(np.int64(0)))


def index_only(x, n):
    for i in range(n):
        y = x + 1  # noqa: F841  (dead after the loop: the loop carries its index alone)
    return x * 2


def test_a_loop_carrying_only_its_index():
    static = d2s.to_static(index_only)
    x = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    for n in (0, 3):
        np.testing.assert_allclose(static(x, rt.to_tensor(np.int64(n))).numpy(), [2.0, 4.0])


def keep_odd_steps(x, n):
    kept = []
    i = 0
    while i < n:
        kept.append(x + i)
        i += 1
        if i % 2 == 1:  # a tensor `if` once `i` is the loop's tensor (Python's 1 on a probe)
            kept.pop()
    return rt.concat(kept + [x * 0])


def keep_odd_steps_ref(x, n):
    kept, i = [], 0
    while i < n:
        kept.append(x + i)
        i += 1
        if i % 2 == 1:
            kept.pop()
    return np.concatenate(kept + [x * 0])


def test_a_list_emptied_under_a_tensor_if_on_the_first_probe():
    """Paddle's `test_list_pop_in_while_loop`: the probe that learns the list's items ran
    the body with `i` still Python's 0, so the pop settled it empty and the real trace
    refused the list ("only tensors, numbers and lists can change")."""
    static = d2s.to_static(keep_odd_steps)
    a = np.array([1.0], "float32")
    for n in (0, 1, 4, 5):
        nn = rt.to_tensor(np.array([n], "int32"))
        want = keep_odd_steps_ref(a, n)
        np.testing.assert_allclose(keep_odd_steps(rt.to_tensor(a), nn).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(a), nn).numpy(), want)
    assert len(static.program_cache) == 1


def attribute_becomes_a_tensor(x):
    class Holder:  # Paddle's `while_loop_class_var`
        def __init__(self):
            self.a, self.b = 1, 2

    foo = Holder()
    i = rt.zeros([1], "int64")
    while i < x:
        foo.b = rt.zeros([1], "float32")
        foo.a = foo.b + foo.a
        i += 1
    return foo.a


def test_an_attribute_a_loop_makes_a_tensor_is_checked_where_the_loop_never_ran():
    """The numbers fill tensors of the body's type (issue 35; this was refused for every
    input); where the loop ran zero times the read of `foo.a` raises, naming it as the user
    wrote it (not the while op's "loop variable 3")."""
    static = d2s.to_static(attribute_becomes_a_tensor)
    x = rt.to_tensor(np.array([2], "int64"))
    np.testing.assert_allclose(attribute_becomes_a_tensor(x).numpy(), [1.0])  # eager runs
    np.testing.assert_allclose(static(x).numpy(), [1.0])
    zero = rt.to_tensor(np.array([0], "int64"))
    assert attribute_becomes_a_tensor(zero) == 1
    with pytest.raises(TypeError, match=r"'foo\.a' is the Python number 1 before a loop") as e:
        static(zero)
    assert "loop variable" not in str(e.value) and "while i < x:" in str(e.value)
    assert len(static.program_cache) == 1


class Recorder:
    def __init__(self):
        self.tested = []


def counted_condition(x, n, rec):
    i = rt.zeros([], "int64")
    y = x

    def more(i):
        rec.tested.append(1)  # eager: once per test, the last one false
        return i < n

    while more(i):
        y = y + 1.0
        i = i + 1
    return y


def test_python_effects_in_a_tensor_loop_condition_are_refused():
    """Eager code runs the condition's Python effects each time it tests it (4 appends for
    3 iterations); the program's condition block only computes a truth value (a trace
    appended 3 times, silently)."""
    x, n = rt.to_tensor(np.array([1.0], "float32")), rt.to_tensor(np.int64(3))
    rec = Recorder()
    np.testing.assert_allclose(counted_condition(x, n, rec).numpy(), [4.0])
    assert len(rec.tested) == 4
    rec = Recorder()
    with pytest.raises(d2s.ConversionError, match=r"rec\.tested is changed by the condition"):
        d2s.to_static(counted_condition)(x, n, rec)
    assert rec.tested == []  # put back as it was
