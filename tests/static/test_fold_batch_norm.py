"""`static.passes.fold_batch_norm`: an eval-mode BatchNorm after a convolution or linear layer
moves into its weight and bias. Each pattern: the folded program equals the traced one, the
eager Layer and (where short) a NumPy reference, within float32 tolerance, and has no
`batch_norm` left; each near miss keeps its BatchNorm. Folding is for inference programs only,
so there is no gradient to check: training-mode BatchNorm never folds."""
import numpy as np
import pytest

import runtime as rt
import runtime.nn.functional as F
from runtime import nn, static

RTOL, ATOL = 1e-5, 1e-6


def _randomized(layer: nn.Layer, seed: int = 0) -> nn.Layer:
    """Every BatchNorm of `layer` with statistics and affine parameters far from 0 and 1 (so a
    fold that dropped one of them shows), in eval mode."""
    rng = np.random.RandomState(seed)
    for sub in layer.sublayers(include_self=True):
        if isinstance(sub, (nn.BatchNorm1D, nn.BatchNorm2D)):
            c = sub._mean.shape[0]
            for t, low, high in ((sub._mean, -1, 1), (sub._variance, 0.2, 3),
                                 (sub.weight, 0.5, 2), (sub.bias, -1, 1)):
                t.set_value(rng.uniform(low, high, c).astype("float32"))
    return layer.eval()


def _traced(forward, shape: list):
    main = static.Program()
    with static.program_guard(main):
        out = forward(static.data("x", [None, *shape[1:]], "float32"))
    return main, out


def _run(program, x, out):
    got, = static.Executor().run(program, {"x": x}, [out if isinstance(out, str) else out.name])
    return got


def _types(program) -> list:
    return [op.type for op in program.ops()]


def _check_folds(layer, shape: list, seed: int = 1, reference=None):
    """Trace `layer` (eval mode), fold, and compare on one input; returns the folded
    program's op types."""
    x = np.random.RandomState(seed).randn(*shape).astype("float32")
    main, out = _traced(layer, shape)
    folded = static.passes.eliminate_dead_code(
        static.passes.fold_batch_norm(main, keep=[out]), keep=[out])
    folded.verify()
    want = layer(rt.to_tensor(x)).numpy()
    np.testing.assert_allclose(_run(main, x, out), want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_run(folded, x, out), want, rtol=RTOL, atol=ATOL)
    if reference is not None:
        np.testing.assert_allclose(want, reference(x), rtol=RTOL, atol=1e-5)
    assert folded.passes[-2:] == ["fold_batch_norm", "eliminate_dead_code"]
    assert "batch_norm" in _types(main)
    return _types(folded)


def _numpy_bn(y, bn, axis):
    shape = [1] * y.ndim
    shape[axis] = -1
    m, v, g, b = (t.numpy().reshape(shape) for t in (bn._mean, bn._variance, bn.weight, bn.bias))
    return (y - m) / np.sqrt(v + bn._epsilon) * g + b


def _numpy_conv(x, w, b, padding):
    """Stride 1, groups 1, NCHW."""
    xp = np.pad(x, [(0, 0), (0, 0), (padding, padding), (padding, padding)])
    win = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))
    y = np.einsum("nchwij,ocij->nohw", win, w)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_then_batch_norm_folds_with_and_without_conv_bias(bias):
    rt.seed(0)
    model = _randomized(nn.Sequential(nn.Conv2D(3, 5, 3, padding=1, bias_attr=None if bias
                                                else False), nn.BatchNorm2D(5), nn.ReLU()))
    conv, bn = model[0], model[1]

    def reference(x):
        y = _numpy_conv(x, conv.weight.numpy(), conv.bias.numpy() if bias else None, 1)
        return np.maximum(_numpy_bn(y, bn, 1), 0)

    assert _check_folds(model, [2, 3, 6, 6], reference=reference) == ["conv2d", "add", "relu"]


@pytest.mark.parametrize("groups", [1, 2, 6])
def test_grouped_and_depthwise_conv_fold(groups):
    rt.seed(1)
    model = _randomized(nn.Sequential(nn.Conv2D(6, 6, 3, stride=2, groups=groups),
                                      nn.BatchNorm2D(6)))
    assert _check_folds(model, [2, 6, 7, 7]) == ["conv2d", "add"]


def test_nhwc_conv_folds_through_its_transpose():
    rt.seed(2)
    model = _randomized(nn.Sequential(nn.Conv2D(3, 4, 3, data_format="NHWC"),
                                      nn.BatchNorm2D(4, data_format="NHWC")))
    # the conv bias (added before the transpose back to NHWC) is in the new bias
    assert _check_folds(model, [2, 6, 5, 3]) == ["transpose", "conv2d", "transpose", "add"]


@pytest.mark.parametrize("data_format", ["NCL", "NLC"])
def test_conv1d_then_batch_norm_1d_folds(data_format):
    rt.seed(3)
    model = _randomized(nn.Sequential(nn.Conv1D(3, 4, 3, padding=1, data_format=data_format),
                                      nn.BatchNorm1D(4, data_format=data_format)))
    shape = [2, 3, 9] if data_format == "NCL" else [2, 9, 3]
    assert "batch_norm" not in _check_folds(model, shape)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_transpose_folds(groups):
    rt.seed(4)
    model = _randomized(nn.Sequential(nn.Conv2DTranspose(4, 6, 3, stride=2, groups=groups),
                                      nn.BatchNorm2D(6)))
    assert _check_folds(model, [2, 4, 4, 4]) == ["conv2d_transpose", "add"]


def test_linear_then_batch_norm_1d_becomes_one_linear():
    rt.seed(5)
    model = _randomized(nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1D(4), nn.Tanh()))
    fc, bn = model[0], model[1]

    def reference(x):
        return np.tanh(_numpy_bn(x @ fc.weight.numpy() + fc.bias.numpy(), bn, 1))

    assert _check_folds(model, [3, 6], reference=reference) == ["linear", "tanh"]


def test_linear_on_a_sequence_then_channels_last_batch_norm():
    rt.seed(6)
    model = _randomized(nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1D(4, data_format="NLC")))
    assert _check_folds(model, [2, 5, 6]) == ["linear"]


def test_matmul_and_add_then_batch_norm_fold():
    rt.seed(7)
    w = rt.Parameter(np.random.RandomState(0).randn(4, 3).astype("float32"))
    b = rt.Parameter(np.random.RandomState(1).randn(3).astype("float32"))
    bn = _randomized(nn.BatchNorm1D(3))
    assert _check_folds(lambda x: bn(rt.matmul(x, w) + b), [5, 4]) == ["matmul", "add"]


def test_batch_norm_without_affine_parameters_folds():
    rt.seed(8)
    conv, bn = nn.Conv2D(2, 3, 1), _randomized(nn.BatchNorm2D(3))

    def forward(x):
        return F.batch_norm(conv(x), bn._mean, bn._variance, training=False)

    assert _check_folds(forward, [2, 2, 3, 3]) == ["conv2d", "add"]


def test_a_number_added_between_folds_into_the_bias():
    rt.seed(19)
    conv, bn = nn.Conv2D(2, 3, 3, bias_attr=False), _randomized(nn.BatchNorm2D(3))
    assert _check_folds(lambda x: bn(conv(x) + 0.5), [2, 2, 4, 4]) == ["conv2d", "add"]


def test_batch_norms_one_after_another_both_fold():
    rt.seed(9)
    model = _randomized(nn.Sequential(nn.Conv2D(2, 3, 3), nn.BatchNorm2D(3), nn.BatchNorm2D(3)))
    assert _check_folds(model, [2, 2, 5, 5]) == ["conv2d", "add"]


def test_shared_conv_weight_folds_per_use():
    rt.seed(10)
    conv = nn.Conv2D(3, 3, 3, padding=1)
    bn1, bn2 = _randomized(nn.BatchNorm2D(3), 1), _randomized(nn.BatchNorm2D(3), 2)
    types = _check_folds(lambda x: bn1(conv(x)) + bn2(conv(x)), [1, 3, 4, 4])
    assert types.count("conv2d") == 2 and "batch_norm" not in types


# ---- near misses: the BatchNorm stays ------------------------------------------------------

def _kept(forward, shape: list, keep_more=()) -> list:
    x = np.random.RandomState(0).randn(*shape).astype("float32")
    main, out = _traced(forward, shape)
    keep = [out, *keep_more(main)] if callable(keep_more) else [out]
    folded = static.passes.fold_batch_norm(main, keep=keep)
    np.testing.assert_allclose(_run(folded, x, out), _run(main, x, out), rtol=RTOL, atol=ATOL)
    return _types(folded)


def test_batch_norm_after_something_else_is_kept():
    rt.seed(11)
    conv, bn = nn.Conv2D(3, 3, 3), _randomized(nn.BatchNorm2D(3))
    assert _kept(lambda x: bn(F.relu(conv(x))), [2, 3, 5, 5]).count("batch_norm") == 1
    assert _kept(lambda x: bn(x * 2.0), [2, 3, 5, 5]).count("batch_norm") == 1


def test_batch_norm_of_a_conv_output_read_elsewhere_is_kept():
    rt.seed(12)
    conv, bn = nn.Conv2D(3, 3, 3), _randomized(nn.BatchNorm2D(3))

    def forward(x):
        y = conv(x)
        return bn(y) + y

    assert "batch_norm" in _kept(forward, [2, 3, 5, 5])


def test_batch_norm_of_a_fetched_conv_output_is_kept():
    rt.seed(13)
    conv, bn = nn.Conv2D(3, 3, 3), _randomized(nn.BatchNorm2D(3))
    fetched = []

    def forward(x):
        fetched.append(conv(x))
        return bn(fetched[0])

    assert "batch_norm" in _kept(forward, [2, 3, 5, 5], lambda main: [fetched[0].name])


def test_training_mode_batch_norm_is_kept():
    rt.seed(14)
    model = nn.Sequential(nn.Conv2D(3, 3, 3), nn.BatchNorm2D(3))  # left in training mode
    main, _ = _traced(model, [2, 3, 5, 5])
    assert "batch_norm" in _types(static.passes.fold_batch_norm(main))


def test_computed_statistics_or_weights_are_kept():
    rt.seed(15)
    conv, bn = nn.Conv2D(3, 3, 3), _randomized(nn.BatchNorm2D(3))

    def data_statistics(x):
        y = conv(x)
        return F.batch_norm(y, rt.mean(x, axis=[0, 2, 3]), bn._variance, training=False)

    def data_weight(x):
        w = conv.weight * rt.mean(x)
        return bn(F.conv2d(x, w))

    assert "batch_norm" in _kept(data_statistics, [2, 3, 5, 5])
    assert "batch_norm" in _kept(data_weight, [2, 3, 5, 5])


def test_a_bias_that_is_not_per_channel_is_kept():
    rt.seed(16)
    conv, bn = nn.Conv2D(3, 3, 3), _randomized(nn.BatchNorm2D(3))
    per_pixel = rt.to_tensor(np.random.RandomState(0).randn(1, 1, 3, 3).astype("float32"))
    assert "batch_norm" in _kept(lambda x: bn(conv(x) + per_pixel), [2, 3, 5, 5])


# ---- inside control flow --------------------------------------------------------------------

def test_folds_inside_both_branches_of_a_cond():
    rt.seed(17)
    a = _randomized(nn.Sequential(nn.Conv2D(3, 4, 3), nn.BatchNorm2D(4)), 1)
    b = _randomized(nn.Sequential(nn.Conv2D(3, 4, 1, stride=2), nn.BatchNorm2D(4)), 2)

    def forward(x):
        return static.nn.cond(rt.mean(x) > 0, lambda: a(x), lambda: b(x[:, :, :5, :5]))

    main, out = _traced(forward, [2, 3, 5, 5])
    folded = static.passes.fold_batch_norm(main, keep=[out])
    assert "batch_norm" in _types(main) and "batch_norm" not in _types(folded)
    for sign, branch in ((1, a), (-1, b)):  # inputs that take each branch
        x = sign * np.abs(np.random.RandomState(3).randn(2, 3, 5, 5)).astype("float32")
        want = branch(rt.to_tensor(x if sign > 0 else x[:, :, :5, :5])).numpy()
        np.testing.assert_allclose(_run(folded, x, out), want, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(_run(main, x, out), want, rtol=RTOL, atol=ATOL)


def test_the_input_program_is_left_unchanged_and_shares_its_parameters():
    rt.seed(18)
    model = _randomized(nn.Sequential(nn.Conv2D(2, 3, 3), nn.BatchNorm2D(3)))
    main, out = _traced(model, [1, 2, 4, 4])
    before = str(main)
    folded = static.passes.fold_batch_norm(main, keep=[out])
    assert str(main) == before and main.passes == []
    assert folded.tensors[model[0].weight.name] is main.tensors[model[0].weight.name]
    text = str(folded)
    assert f"conv2d(%x, %{model[0].weight.name}.folded_0)" in text
