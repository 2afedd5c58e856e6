"""Creation and random ops: seeded reproducibility, distributions, dtypes, shapes given as
tensors, and (when runtime.static is available) the same stream in static mode.
"""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
from runtime import static
from runtime.ops import random as R


def _draws():
    return [rt.rand([3]).numpy(), rt.randn([2, 2]).numpy(), rt.randint(0, 100, [4]).numpy(),
            rt.uniform([3], min=-2.0, max=0.5).numpy(), rt.normal(1.0, 3.0, [2]).numpy(),
            rt.randperm(5).numpy(), rt.bernoulli(rt.full([6], 0.5)).numpy()]


def test_seed_reproduces_every_random_op_and_different_seeds_differ():
    rt.seed(42)
    first = _draws()
    rt.seed(42)
    again = _draws()
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    rt.seed(43)
    other = _draws()
    assert not np.array_equal(first[0], other[0]) and not np.array_equal(first[1], other[1])


def test_consecutive_draws_differ_and_state_round_trips():
    rt.seed(0)
    a, b = rt.rand([4]).numpy(), rt.rand([4]).numpy()
    assert not np.array_equal(a, b)
    state = rt.get_rng_state()
    c = rt.randn([5]).numpy()
    rt.set_rng_state(state)
    np.testing.assert_array_equal(rt.randn([5]).numpy(), c)


def test_per_call_seed_gives_a_fixed_stream_without_touching_the_default():
    rt.seed(1)
    x = rt.uniform([3], seed=99).numpy()
    after = rt.rand([2]).numpy()
    rt.seed(1)
    np.testing.assert_array_equal(rt.uniform([3], seed=99).numpy(), x)
    np.testing.assert_array_equal(rt.rand([2]).numpy(), after)


def test_the_stream_is_numpys_pcg64():
    rt.seed(7)
    got = rt.randn([3, 2], dtype="float64").numpy()
    np.testing.assert_array_equal(got, np.random.Generator(np.random.PCG64(7))
                                  .standard_normal((3, 2)))


@pytest.mark.parametrize("name,make,mean,std", [
    ("rand", lambda n: rt.rand([n]), 0.5, (1 / 12) ** 0.5),
    ("randn", lambda n: rt.randn([n]), 0.0, 1.0),
    ("uniform", lambda n: rt.uniform([n], min=2.0, max=6.0), 4.0, 4 / 12 ** 0.5),
    ("normal", lambda n: rt.normal(-3.0, 0.5, [n]), -3.0, 0.5),
    ("randint", lambda n: rt.randint(0, 10, [n]), 4.5, (99 / 12) ** 0.5),
    ("bernoulli", lambda n: rt.bernoulli(rt.full([n], 0.3)), 0.3, (0.21) ** 0.5),
])
def test_distribution_moments(name, make, mean, std):
    rt.seed(0)
    n = 200_000
    x = make(n).numpy().astype(np.float64)
    # 6 standard errors: a wrong distribution fails, a right one essentially never does
    assert abs(x.mean() - mean) < 6 * std / n ** 0.5, name
    assert abs(x.std() - std) < 0.02 * std, name


def test_ranges_of_bounded_distributions():
    rt.seed(0)
    u = rt.uniform([10_000], min=-1.0, max=2.0).numpy()
    assert u.min() >= -1.0 and u.max() < 2.0
    r = rt.randint(3, 7, [10_000]).numpy()
    assert set(np.unique(r)) == {3, 4, 5, 6}
    assert set(rt.randint(2, shape=[100]).numpy()) <= {0, 1}
    assert sorted(rt.randperm(50).tolist()) == list(range(50))
    normal_t = rt.normal(rt.to_tensor([0.0, 100.0]), rt.to_tensor([1e-3, 1e-3]))
    np.testing.assert_allclose(normal_t.numpy(), [0.0, 100.0], atol=0.01)


def test_random_dtypes():
    assert rt.rand([2]).dtype == "float32" and rt.randn([2]).dtype == "float32"
    assert rt.rand([2], dtype="float64").dtype == "float64"
    assert rt.uniform([2], dtype=rt.float16).dtype == "float16"
    assert rt.randint(0, 5, [2]).dtype == "int64"
    assert rt.randint(0, 5, [2], dtype="int32").dtype == "int32"
    assert rt.randperm(3).dtype == "int64"
    assert rt.bernoulli(rt.full([2], 0.5, dtype="float64")).dtype == "float64"
    with pytest.raises(TypeError, match="gaussian_random: dtype must be a floating type"):
        rt.randn([2], dtype="int64")


def test_random_ops_are_marked_for_passes():
    for name in ("uniform_random", "gaussian_random", "randint", "randperm", "bernoulli"):
        assert R.is_random(name) and rt.ops.OPS[name].nondiff
    assert not R.is_random("full") and not R.is_random(rt.ops.OPS["add"])


def test_generator_api_returns_device_arrays_of_the_requested_dtype():
    g = R.Generator(5)
    assert g.random([2, 3]).dtype == np.float32 and g.random([2, 3]).shape == (2, 3)
    assert g.uniform(0, 1, [2], "float64").dtype == np.float64
    assert g.standard_normal([4]).shape == (4,)
    assert g.normal(0.0, 1.0, [1]).dtype == np.float32
    assert g.integers(0, 3, [5]).dtype == np.int64
    assert sorted(g.permutation(4).tolist()) == [0, 1, 2, 3]
    assert g.initial_seed() == 5
    assert R.default_generator() is R.default_generator()
    assert R.host_generator() is R.default_generator().host
    assert R.uniform_array(np, (3,)).shape == (3,)


# ---- creation ---------------------------------------------------------------------------------

def test_creation_dtypes_follow_paddle():
    assert rt.zeros([2]).dtype == "float32" and rt.ones([2]).dtype == "float32"
    assert rt.full([2], 1.5).dtype == "float32"
    assert rt.full([2], True).dtype == "bool"
    assert rt.full([2], 3, dtype="int32").dtype == "int32"
    assert rt.arange(5).dtype == "int64" and rt.arange(0.0, 1.0, 0.5).dtype == "float32"
    assert rt.arange(rt.to_tensor(4)).dtype == "int64"
    assert rt.arange(rt.to_tensor(2.0)).dtype == "float32"
    assert rt.linspace(0, 1, 3).dtype == "float32" and rt.eye(2).dtype == "float32"
    x = rt.zeros([2], dtype="int64")
    assert rt.zeros_like(x).dtype == "int64" and rt.ones_like(x, dtype="float64").dtype == "float64"
    assert rt.full_like(x, 7).tolist() == [7, 7]
    assert rt.zeros([]).shape == [] and rt.ones(3).shape == [3]


def test_shapes_and_bounds_may_be_tensors():
    x = rt.ones([5, 3])
    n = rt.shape(x)[0]
    assert rt.zeros([n, 4]).shape == [5, 4]
    assert rt.full(rt.shape(x), 2.0).tolist() == [[2.0] * 3] * 5
    assert rt.rand([n, 2]).shape == [5, 2]
    assert rt.randint(0, 3, rt.shape(x)).shape == [5, 3]
    assert rt.arange(n).tolist() == [0, 1, 2, 3, 4]
    assert rt.arange(1, rt.to_tensor([4]), 2).tolist() == [1, 3]
    assert rt.linspace(0.0, rt.to_tensor(1.0), rt.to_tensor(3)).tolist() == [0.0, 0.5, 1.0]
    assert rt.full([2], rt.to_tensor(3.5)).tolist() == [3.5, 3.5]
    assert rt.reshape(x, [n, -1, 1]).shape == [5, 3, 1]
    assert rt.reshape(x, rt.to_tensor([3, 5])).shape == [3, 5]
    assert rt.expand(rt.ones([1, 3]), [n, 3]).shape == [5, 3]
    with pytest.raises(TypeError, match="full: shape tensors must be integers, got float32"):
        rt.zeros([rt.to_tensor(2.0), 3])
    with pytest.raises(ValueError, match=r"full: a tensor entry of shape must hold one value"):
        rt.zeros([rt.to_tensor([2, 3]), 3])


def test_tril_triu_are_differentiable():
    x = rt.to_tensor(np.ones((3, 3)), stop_gradient=False)
    (rt.tril(x, -1) * 2.0 + rt.triu(x, 1)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.tril(np.full((3, 3), 2.0), -1)
                                  + np.triu(np.ones((3, 3)), 1))


# ---- static mode ------------------------------------------------------------------------------


def test_static_random_ops_draw_the_eager_stream_at_run_time():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3], "float32")
        noise = rt.randn(rt.shape(x)) * 0.0 + rt.rand([2])[0]
        r = rt.randint(0, 1000, [4])
    exe = static.Executor()
    feed = {"x": np.zeros((2, 3), np.float32)}
    rt.seed(11)
    first = exe.run(main, feed=feed, fetch_list=[noise, r])
    second = exe.run(main, feed=feed, fetch_list=[noise, r])
    assert not np.array_equal(first[1], second[1]), "random ops must not be constant-folded"
    rt.seed(11)
    eager_noise = rt.randn([2, 3]) * 0.0 + rt.rand([2])[0]
    eager_r = rt.randint(0, 1000, [4])
    np.testing.assert_array_equal(first[0], eager_noise.numpy())
    np.testing.assert_array_equal(first[1], eager_r.numpy())


def test_static_creation_with_unknown_dims():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3], "float32")
        z = rt.zeros([rt.shape(x)[0], 4])
        a = rt.arange(rt.shape(x)[0])
        o = rt.ones_like(x, dtype="int64")
        y = rt.reshape(x, [-1]) + rt.full([1], 2.0)
        assert list(z.shape) == [-1, 4] and list(y.shape) == [-1]
    out = static.Executor().run(main, feed={"x": np.ones((5, 3), np.float32)},
                                fetch_list=[z, a, o, y])
    assert out[0].shape == (5, 4) and out[0].dtype == np.float32
    assert out[1].tolist() == [0, 1, 2, 3, 4]
    assert out[2].dtype == np.int64 and out[2].shape == (5, 3)
    np.testing.assert_array_equal(out[3], np.full(15, 3.0, np.float32))
