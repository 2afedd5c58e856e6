"""A value computed before a tensor `if` and read only by the branch a run does not take gets
no gradient in eager code: its backward never runs. The program's backward ran it with a zero
gradient, and where its rule is infinite at the point (`1 / norm` at a zero norm, `sqrt` at
zero) `0 * inf` gave NaN gradients where eager gives zeros: a silent wrong gradient (corpus
case wild3_llm.masked_mean_from_lengths, sentence embeddings normalised only when the norm is
not tiny). The backward of such values now counts only on the runs whose branch reads them."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def normalise_unless_tiny(x):
    norm = rt.linalg.norm(x, axis=-1, keepdim=True)
    y = x * 2.0
    if norm.min() > 1e-3:
        y = y / norm
    return y


def root_scaled_else_branch(x, scale):
    root = rt.sqrt(x)  # infinite slope at 0: read only by the else branch
    if x.min() <= 0:
        y = x * scale
    else:
        y = root * scale + x
    return (y * y).sum()


def _np_normalise(x):
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x * 2.0 / norm if norm.min() > 1e-3 else x * 2.0


def _np_root(x, scale):
    y = x * scale if x.min() <= 0 else np.sqrt(x) * scale + x
    return (y * y).sum()


def _grads(fn, x, *rest):
    t = rt.to_tensor(x, stop_gradient=False)
    out = fn(t, *rest)
    rt.sum(out * out).backward()
    return out.numpy(), t.grad.numpy()


@pytest.mark.parametrize("x", [np.zeros([2, 3]), np.array([[0.3, -0.4, 1.2], [2.0, 0.1, 0.5]])],
                         ids=["zero norm: branch not taken", "branch taken"])
def test_a_value_read_only_by_the_branch_not_taken_gets_no_gradient(x):
    static = d2s.to_static(normalise_unless_tiny)
    eager_out, eager_grad = _grads(normalise_unless_tiny, x)
    out, grad = _grads(static, x)
    np.testing.assert_allclose(out, _np_normalise(x), rtol=1e-12)
    np.testing.assert_allclose(out, eager_out, rtol=1e-12)
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        grad, numeric_grad(lambda v: (_np_normalise(v) ** 2).sum(), x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x", [np.array([0.0, 1.0, 4.0]), np.array([0.25, 1.0, 4.0])],
                         ids=["zero: the if branch", "positive: the else branch"])
def test_the_else_branch_and_a_chain_of_ops_before_it(x):
    static = d2s.to_static(root_scaled_else_branch)
    results = [_grads(f, x, 1.5) for f in (root_scaled_else_branch, static)]
    assert len(results) == 2
    (eager_out, eager_grad), (out, grad) = results
    np.testing.assert_allclose(out, _np_root(x, 1.5), rtol=1e-12)
    np.testing.assert_allclose(out, eager_out, rtol=1e-12)
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-10)
    if x.min() > 0:  # (finite differences at sqrt's kink would straddle it)
        np.testing.assert_allclose(
            grad, numeric_grad(lambda v: _np_root(v, 1.5) ** 2, x), rtol=1e-5)


def test_one_program_for_both_paths():
    static = d2s.to_static(root_scaled_else_branch)
    for x in ([0.0, 1.0], [0.5, 1.0], [-1.0, 2.0]):
        _grads(static, np.array(x), 2.0)
    assert len(static.program_cache) == 1


def halving_sum(x):
    root = rt.sqrt(x)  # read only by the if branch of a tensor `if` in a tensor `while`
    s = x.sum()
    h = s * 0
    while s > 0.5:
        if (x * s).min() > 0.1:
            h = h + (root * s).sum()
        else:
            h = h + s
        s = s * 0.5
    return h


def _np_halving_sum(x):
    s, h = x.sum(), 0.0
    while s > 0.5:
        h = h + (np.sqrt(x) * s).sum() if (x * s).min() > 0.1 else h + s
        s = s * 0.5
    return h


@pytest.mark.parametrize("x", [[0.0, 1.0], [0.25, 1.0], [0.05, 3.0], [0.1, 0.2]],
                         ids=["never the if branch", "always", "on the first trip only", "no trip"])
def test_a_branch_inside_a_graph_loop_that_no_trip_takes(x):
    x = np.array(x)
    static = d2s.to_static(halving_sum)
    (eager_out, eager_grad), (out, grad) = [_grads(f, x) for f in (halving_sum, static)]
    np.testing.assert_allclose(out, _np_halving_sum(x), rtol=1e-12)
    np.testing.assert_allclose(out, eager_out, rtol=1e-12)
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-10)
    if x.min() > 0:
        np.testing.assert_allclose(
            grad, numeric_grad(lambda v: _np_halving_sum(v) ** 2, x), rtol=1e-5)
