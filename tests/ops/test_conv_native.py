"""The generated-C convolution kernels (runtime/program/conv_native.py) against the NumPy path
they replace (runtime/ops/nn_conv.py) and a per-pixel reference: the forward, the input
gradient (the forward's kernel on the flipped weight at stride 1, its own kernel at other
strides and where the padding is wider than the kernel) and the weight gradient, on every
conv2d configuration of the op tests (strides, dilations, groups, padding modes; the ones the
C code does not take run the NumPy path and are checked to), eagerly and converted.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from finite_differences import numeric_grad
from test_conv_kernels import CONFIGS, IDS, conv_reference

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.ops import nn_conv
from runtime.program import conv_kernels, conv_native, native_build, threads

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")

# the op tests' configurations, and shapes that fill whole vector blocks (the ResNet block's),
# leave ragged row ends (WO = 13), a ragged output-channel block (5 per group) and a 5-wide
# kernel (the weight gradient's smaller block); padding [top, bottom, left, right]
NATIVE_CONFIGS = CONFIGS + [
    ((2, 16, 32, 32), (16, 16, 3, 3), {"padding": [1, 1, 1, 1]}),
    ((2, 4, 9, 13), (10, 2, 3, 3), {"padding": [1, 1, 1, 1], "groups": 2}),
    ((1, 3, 8, 17), (5, 3, 5, 5), {"padding": [2, 2, 2, 2], "dilation": (1, 2)}),
    ((1, 2, 5, 4), (2, 2, 3, 2), {"padding": "VALID"}),
    ((1, 2, 5, 4), (2, 2, 3, 3), {"padding": "SAME"}),
    ((3, 4, 1, 21), (6, 4, 1, 3), {"padding": [0, 0, 1, 1]}),  # conv1d's shape
    # strided (the phase planes of conv_native's pad_image): ResNet's downsampling conv and
    # shortcut, MobileNet's stem, stride 3 with asymmetric padding, mixed strides with
    # dilation, groups and a 5-wide kernel, odd sizes
    ((2, 16, 32, 32), (32, 16, 3, 3), {"padding": [1, 1, 1, 1], "stride": 2}),
    ((2, 16, 32, 32), (32, 16, 1, 1), {"padding": [0, 0, 0, 0], "stride": 2}),
    ((1, 3, 32, 32), (8, 3, 3, 3), {"padding": [1, 1, 1, 1], "stride": 2}),
    ((1, 3, 11, 13), (5, 3, 3, 3), {"padding": [1, 0, 2, 1], "stride": 3}),
    ((2, 4, 9, 17), (6, 2, 3, 3), {"padding": [1, 1, 1, 1], "stride": 2, "groups": 2,
                                   "dilation": (2, 1)}),
    ((1, 2, 7, 20), (3, 2, 2, 5), {"padding": [0, 1, 2, 2], "stride": (1, 2),
                                   "dilation": (1, 2)}),
]
# depthwise (conv_depthwise_native): MobileNet's, strides 1/2/3, dilation, asymmetric and
# wide padding, channel multipliers, odd sizes, batch 1
DEPTHWISE_CONFIGS = [
    ((16, 8, 16, 16), (8, 1, 3, 3), {"padding": [1, 1, 1, 1], "groups": 8}),
    ((2, 16, 8, 8), (16, 1, 3, 3), {"padding": [1, 1, 1, 1], "stride": 2, "groups": 16}),
    ((1, 3, 11, 13), (6, 1, 3, 3), {"padding": [1, 0, 2, 1], "stride": 3, "groups": 3}),
    ((1, 2, 9, 7), (6, 1, 3, 2), {"padding": [2, 1, 0, 3], "stride": (2, 1),
                                  "dilation": (2, 3), "groups": 2}),
    ((1, 3, 6, 7), (3, 1, 5, 5), {"padding": [3, 3, 3, 3], "groups": 3}),
    ((3, 2, 6, 5), (4, 1, 3, 3), {"padding": "SAME", "stride": 2, "groups": 2}),
]
NATIVE_CONFIGS += DEPTHWISE_CONFIGS
NATIVE_IDS = IDS + ["block-16", "ragged", "5x5-dilated", "valid", "same", "conv1d",
                    "down-3x3", "down-1x1", "stem", "stride3", "stride2-groups", "stride-1x2",
                    "dw-mobilenet", "dw-stride2", "dw-stride3-x2", "dw-dilated-x3",
                    "dw-5x5-wide", "dw-same"]


def takes_c(x_shape, w_shape, kwargs) -> dict:
    """How many calls of each C kernel `kernels` makes (by the name `nn_conv` calls it):
    depthwise convolutions take the three depthwise kernels, 1 x 1 ones none, others the
    forward, the weight gradient and the input gradient: at stride 1 a convolution with the
    flipped kernel (the forward's kernel again), at other strides (and where the padding is
    wider than the dilated kernel: `nn_conv._flipped_padding`) its own kernel."""
    depthwise = kwargs.get("groups", 1) > 1 and w_shape[1] == 1
    if depthwise:
        return {"depthwise_conv2d": 1, "depthwise_grad_input": 1, "depthwise_grad_filter": 1}
    if tuple(w_shape[2:]) == (1, 1):
        return {}
    attrs = op_attrs(kwargs)
    _, pads, hw = nn_conv._geometry(x_shape, w_shape, attrs["stride"], attrs["padding"],
                                    attrs["dilation"])
    if nn_conv._flipped_padding(x_shape, w_shape, hw, attrs["stride"], pads,
                                attrs["dilation"]) is not None:
        return {"conv2d": 2, "conv2d_grad_filter": 1}
    return {"conv2d": 1, "conv2d_grad_input": 1, "conv2d_grad_filter": 1}


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Native code compiled on the calling thread into a fresh cache; counts the calls the C
    kernels answered (not None) by op."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(conv_kernels, "_holders", {})
    monkeypatch.setattr(conv_kernels, "_planned", {})
    answered = dict.fromkeys(nn_conv.NATIVE_KERNELS, 0)

    def counting(name, fn):
        def call(*args):
            out = fn(*args)
            answered[name] += out is not None
            return out
        return call

    monkeypatch.setattr(nn_conv, "NATIVE_KERNELS", {
        name: counting(name, fn) for name, fn in nn_conv.NATIVE_KERNELS.items()})
    return answered


def op_attrs(kwargs) -> dict:
    return {"stride": [int(s) for s in np.broadcast_to(kwargs.get("stride", 1), 2)],
            "padding": kwargs["padding"], "groups": kwargs.get("groups", 1),
            "dilation": [int(d) for d in np.broadcast_to(kwargs.get("dilation", 1), 2)]}


def kernels(x, w, g, kwargs):
    """(forward, input gradient, weight gradient) of the registered kernels."""
    attrs = op_attrs(kwargs)
    return (nn_conv._conv2d_kernel(np, x, w, **attrs),
            nn_conv._grad_input_kernel(np, g, w, x, **attrs),
            nn_conv._grad_filter_kernel(np, x, g, w, **attrs))


@pytest.mark.parametrize("x_shape, w_shape, kwargs", NATIVE_CONFIGS, ids=NATIVE_IDS)
def test_kernels_equal_the_numpy_path(x_shape, w_shape, kwargs, counted, monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    out_shape = nn_conv._conv2d_kernel(np, x, w, **op_attrs(kwargs)).shape
    g = rng.standard_normal(out_shape).astype(np.float32)
    before = dict(counted)
    native = kernels(x, w, g, kwargs)
    ran = {k: counted[k] - before[k] for k in counted if counted[k] > before[k]}
    assert ran == takes_c(x_shape, w_shape, kwargs)
    monkeypatch.setattr(nn_conv, "NATIVE_KERNELS", {})
    numpy_path = kernels(x, w, g, kwargs)
    assert len(native) == len(numpy_path) == 3
    for name, got, want in zip(("forward", "grad input", "grad filter"), native, numpy_path):
        assert got.dtype == np.float32 and got.shape == want.shape, name
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale, err_msg=name)
    if isinstance(kwargs["padding"], list):
        np.testing.assert_allclose(native[0], conv_reference(x, w, **kwargs), rtol=1e-4,
                                   atol=1e-4)


# the op tests' configurations that the C kernels take and the small depthwise ones (the
# finite differences of the larger ones would cost minutes)
C_CONFIGS = [(c, i) for c, i in zip(NATIVE_CONFIGS, NATIVE_IDS)
             if takes_c(*c) and (c in CONFIGS or i.startswith("dw-") and np.prod(c[0]) < 300
                                 and isinstance(c[2]["padding"], list))]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", [c for c, _ in C_CONFIGS],
                         ids=[i for _, i in C_CONFIGS])
def test_gradients_against_finite_differences_eager_and_static(x_shape, w_shape, kwargs,
                                                               counted):
    """float32 through F.conv2d and rt.grad, eager and converted, against central differences
    of the float64 reference."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    r = rng.standard_normal(conv_reference(x, w, **kwargs).shape)
    want = (conv_reference(x, w, **kwargs),
            numeric_grad(lambda a: (conv_reference(a, w, **kwargs) * r).sum(), x, 1e-4),
            numeric_grad(lambda a: (conv_reference(x, a, **kwargs) * r).sum(), w, 1e-4))

    def conv_and_grads(xt, wt, rt_):
        y = F.conv2d(xt, wt, **kwargs)
        dx, dw = rt.grad([(y * rt_).sum()], [xt, wt])
        return y, dx, dw

    for fn in (conv_and_grads, d2s.to_static(conv_and_grads)):
        xt, wt = (rt.to_tensor(a.astype("float32"), stop_gradient=False) for a in (x, w))
        got = fn(xt, wt, rt.to_tensor(r.astype("float32")))
        assert len(got) == len(want)
        for name, g, v in zip(("y", "dx", "dw"), got, want):
            np.testing.assert_allclose(g.numpy(), v, rtol=1e-4, atol=1e-4, err_msg=name)
    # each C kernel at least once eagerly and once converted
    assert all(counted[k] >= 2 for k in takes_c(x_shape, w_shape, kwargs)), counted


def block_step(x, w):
    """A tensor `if` between a stride-1 conv and a stride-2 one: both forwards and weight
    gradients in C, the input gradient as a C convolution at stride 1 and by its own C kernel
    at stride 2."""
    if x.mean() > 0:
        y = F.relu(F.conv2d(x, w, padding=1))
    else:
        y = F.relu(F.conv2d(x, w, padding=1, stride=2))
    loss = (y * y).mean()
    dx, dw = rt.grad([loss], [x, w])
    return loss, dx, dw


def test_one_program_takes_the_c_and_the_numpy_kernels(counted):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((4, 4, 3, 3))
    static = d2s.to_static(block_step)
    for sign, stride in ((1.0, 1), (-1.0, 2)):
        x = np.abs(rng.standard_normal((2, 4, 6, 6))) * sign

        def loss(a, b, stride=stride):
            y = np.maximum(conv_reference(a, b, stride=stride, padding=(1, 1, 1, 1)), 0)
            return (y * y).mean()

        want = (loss(x, w), numeric_grad(lambda a: loss(a, w), x, 1e-4),
                numeric_grad(lambda b, x=x: loss(x, b), w, 1e-4))
        before = dict(counted)
        for fn in (block_step, static):
            got = fn(*(rt.to_tensor(a.astype("float32"), stop_gradient=False) for a in (x, w)))
            assert len(got) == len(want)
            for g, v in zip(got, want):
                np.testing.assert_allclose(g.numpy(), v, rtol=1e-3, atol=1e-4)
        ran_c = {k: counted[k] - before[k] for k in counted if counted[k] > before[k]}
        # per call: the forward, the input gradient and the weight gradient
        want_c = {"conv2d": 4, "conv2d_grad_filter": 2} if stride == 1 else {
            "conv2d": 2, "conv2d_grad_input": 2, "conv2d_grad_filter": 2}
        assert ran_c == want_c, stride


def test_a_geometry_runs_the_same_kernel_cold_or_warm(monkeypatch, tmp_path):
    """`D2S_NATIVE=1`: a geometry not in the cache is compiled before its first call (C and
    NumPy differ at float rounding), so a cold process and a warm one (fresh `_holders`,
    loading the cached C) give the same bits from the first call on. `D2S_NATIVE=0`: never."""
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(conv_kernels, "_holders", {})
    monkeypatch.setattr(conv_kernels, "_planned", {})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 7, 7)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    args = (np, x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    monkeypatch.setenv("D2S_NATIVE", "0")
    assert conv_native.conv2d(*args) is None and conv_kernels._holders == {}
    monkeypatch.setenv("D2S_NATIVE", "1")
    cold = conv_native.conv2d(*args)
    assert cold is not None  # compiled now: the first call runs the C code
    assert os.listdir(tmp_path)  # (and the cache holds it for the next process)
    monkeypatch.setattr(conv_kernels, "_holders", {})
    monkeypatch.setattr(conv_kernels, "_planned", {})
    warm = conv_native.conv2d(*args)
    assert warm is not None and warm.tobytes() == cold.tobytes()
    ones = conv_native.conv2d(np, np.ones_like(x), np.ones_like(w), *args[3:])
    # an interior pixel sees 3 channels x 9 taps of ones; a corner 3 x 4
    assert ones[0, 1, 3, 3] == 27.0 and ones[0, 0, 0, 0] == 12.0


def test_what_the_c_kernels_leave_to_numpy(counted):
    """float64, depthwise (`conv_depthwise_native`'s) and negative padding return None."""
    x32 = np.ones((1, 4, 6, 6), np.float32)
    pads = ((1, 1), (1, 1))
    assert conv_native.conv2d(np, x32.astype(np.float64), np.ones((4, 4, 3, 3)), (1, 1), pads,
                              (1, 1), 1) is None
    assert conv_native.conv2d(np, x32, np.ones((4, 1, 3, 3), np.float32), (1, 1), pads,
                              (1, 1), 4) is None
    assert conv_native.conv2d(np, x32, np.ones((4, 4, 3, 3), np.float32), (1, 1),
                              ((-1, 1), (1, 1)), (1, 1), 1) is None
    assert conv_native.conv2d_grad_filter(np, x32, np.ones((1, 4, 6, 6), np.float32),
                                          (4, 4, 3, 3), (1, 1), pads, (1, 1), 1) is not None


@pytest.mark.parametrize("w_shape, groups", [((6, 4, 3, 3), 1), ((8, 1, 3, 3), 4)],
                         ids=["dense", "depthwise"])
def test_images_split_over_threads_give_the_same_results(w_shape, groups, counted, monkeypatch):
    monkeypatch.setattr(conv_kernels, "SPLIT_MACS", 0)  # split these small calls too
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    g = rng.standard_normal((5, w_shape[0], 6, 7)).astype(np.float32)
    kwargs = {"padding": [1, 1, 1, 1], "groups": groups}
    old = threads.num_threads()
    try:
        threads.set_num_threads(1)
        one = kernels(x, w, g, kwargs)
        threads.set_num_threads(3)
        several = kernels(x, w, g, kwargs)
        again = kernels(x, w, g, kwargs)
    finally:
        threads.set_num_threads(old)
    name = "depthwise_grad_filter" if groups > 1 else "conv2d_grad_filter"
    assert counted[name] == 3 and len(one) == len(several) == len(again) == 3
    for a, b, c in zip(one, several, again):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(c, b)  # the pieces' sums in image order: same bits


class SeparableBlock(rt.nn.Layer):
    """A strided conv, a depthwise one and a dense 3x3: seven C kernels in training."""

    def __init__(self):
        super().__init__()
        self.stem = rt.nn.Conv2D(3, 4, 3, stride=2, padding=1)
        self.depthwise = rt.nn.Conv2D(4, 4, 3, padding=1, groups=4)
        self.dense = rt.nn.Conv2D(4, 4, 3, padding=1)

    def forward(self, x):
        return self.dense(F.relu(self.depthwise(F.relu(self.stem(x)))))


def test_a_programs_geometries_compile_together_with_the_bits_of_one_at_a_time(
        monkeypatch, tmp_path):
    """Tracing plans every geometry the program's first run will ask for; the first kernel
    call builds them in one compiler run per core (`native_build.prepare_sources`), and each
    kernel gives the bits it gives when built alone (a cold process and a warm one agree)."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    builds = []
    build = native_build._build

    def recording(holder, folder):
        builds.append(holder.plan.source.count("#define NAME d2s_"))
        build(holder, folder)
    monkeypatch.setattr(native_build, "_build", recording)
    rng = np.random.default_rng(4)
    x = rt.to_tensor(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
    rt.seed(0)
    model = SeparableBlock()
    runs = []
    for cache in ("together", "alone"):
        monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path / cache))
        monkeypatch.setattr(conv_kernels, "_holders", {})
        monkeypatch.setattr(conv_kernels, "_planned", {})
        monkeypatch.setattr(native_build, "_loaded", {})
        builds.clear()
        step = d2s.to_static(lambda x: model(x)) if cache == "together" else model
        model.clear_gradients()
        y = step(x)
        (y * y).mean().backward()
        runs.append([y.numpy()] + [p.grad.numpy() for p in model.parameters()])
        kernels_built = [n for n in builds if n]
        # forward + weight gradient of stem and dense (the dense input gradient is the
        # forward's kernel of the same geometry; x needs none), and the depthwise's three;
        # tracing also plans the stem's strided input gradient (its op is built, then
        # dropped as unread: `backward.drop_unread`)
        if cache == "together":
            assert sum(kernels_built) == 8
            assert len(kernels_built) <= min(os.cpu_count() or 1, 8)
        else:  # eager: each kernel built at its first call
            assert kernels_built == [1] * 7
    assert len(runs[0]) == len(runs[1]) == 7
    for together, alone in zip(*runs):
        np.testing.assert_array_equal(together, alone)


# transposed convolutions are the input gradient's adjoint map (`nn_conv._col2im_conv`): a
# GAN generator's stride-2 upsampling (with output_padding), stride 3 with groups and
# dilation, SAME padding
TRANSPOSE_CONFIGS = [
    ((2, 16, 8, 8), (16, 8, 4, 4), {"stride": [2, 2], "padding": [1, 1, 1, 1]}),
    ((1, 6, 5, 7), (6, 2, 3, 3), {"stride": [3, 2], "padding": [1, 0, 2, 1],
                                  "output_padding": [1, 1], "dilation": [1, 2], "groups": 2}),
    ((2, 4, 6, 6), (4, 3, 3, 3), {"stride": [2, 2], "padding": "SAME"}),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", TRANSPOSE_CONFIGS,
                         ids=["gan-up", "stride3-groups", "same"])
def test_transposed_convolutions_take_the_input_gradient_kernel(x_shape, w_shape, kwargs,
                                                               counted, monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    attrs = {"output_padding": [0, 0], "dilation": [1, 1], "groups": 1, **kwargs}
    native = nn_conv._transpose_kernel(np, x, w, **attrs)
    assert counted["conv2d_grad_input"] == 1
    monkeypatch.setattr(nn_conv, "NATIVE_KERNELS", {})
    want = nn_conv._transpose_kernel(np, x, w, **attrs)
    assert native.dtype == np.float32 and native.shape == want.shape
    np.testing.assert_allclose(native, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
