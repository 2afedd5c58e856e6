"""`rt.vision.models` at Paddle's names: parameter counts against the published architectures,
LeNet against a NumPy forward, eager vs `d2s.to_static` (eval and training), and
`pretrained=True` refused."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import runtime as rt
from runtime.vision import models

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "models"))
from zoo_harness import check_eval, check_training


def n_params(model) -> int:
    return sum(int(np.prod(p.shape)) for p in model.parameters())


def test_lenet_matches_a_numpy_forward_and_paddles_parameter_count():
    rt.seed(0)
    model = models.LeNet(num_classes=10)
    assert n_params(model) == 61610  # 60 + 2416 + 48120 + 10164 + 850
    x = np.random.default_rng(0).random((2, 1, 28, 28)).astype(np.float32)
    weights = [p.numpy().astype(np.float64) for p in model.parameters()]
    assert len(weights) == 10

    def conv(a, w, b, pad):
        a = np.pad(a, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
        k = w.shape[-1]
        oh, ow = a.shape[2] - k + 1, a.shape[3] - k + 1
        out = np.zeros((a.shape[0], w.shape[0], oh, ow))
        for i in range(oh):
            for j in range(ow):
                out[:, :, i, j] = np.einsum("ncij,ocij->no", a[:, :, i:i + k, j:j + k], w)
        return out + b.reshape(1, -1, 1, 1)

    def pool(a):
        n, c, h, w = a.shape
        return a.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))

    h = pool(np.maximum(conv(x, weights[0], weights[1], 1), 0))
    h = pool(np.maximum(conv(h, weights[2], weights[3], 0), 0)).reshape(2, -1)
    for w, b in zip(weights[4::2], weights[5::2]):
        h = h @ w + b  # Paddle's LeNet has no activation between its linear layers
    np.testing.assert_allclose(model(rt.to_tensor(x)).numpy(), h, rtol=1e-4, atol=1e-5)
    assert models.LeNet(num_classes=0)(rt.to_tensor(x)).shape == [2, 16, 5, 5]


def test_lenet_converted_training_matches_eager():
    rt.seed(1)
    rng = np.random.default_rng(2)
    batches = [(rt.to_tensor(rng.random((4, 1, 28, 28)).astype(np.float32)),
                rt.to_tensor(rng.integers(0, 10, 4))) for _ in range(5)]
    loss_fn = rt.nn.CrossEntropyLoss()
    check_training(models.LeNet(), batches, lambda m, x, y: loss_fn(m(x), y))


@pytest.mark.parametrize("build, count", [
    (models.resnet18, 11_689_512), (models.resnet34, 21_797_672),
    (models.resnet50, 25_557_032), (models.mobilenet_v2, 3_504_872)])
@pytest.mark.slow
def test_imagenet_parameter_counts_match_the_published_architectures(build, count):
    assert n_params(build()) == count


@pytest.mark.slow
def test_vgg16_parameter_count_with_and_without_batch_norm():
    assert n_params(models.vgg16()) == 138_357_544
    # the 13 convolutions (14,714,688) and a scale and shift per channel of each batch norm
    assert n_params(models.vgg16(batch_norm=True, num_classes=0)) == 14_714_688 + 2 * 4224


def _images(seed, n=2, side=32):
    return rt.to_tensor(np.random.default_rng(seed).standard_normal((n, 3, side, side))
                        .astype(np.float32))


def test_resnet18_eval_eager_equals_static():
    rt.seed(2)
    model = models.resnet18(num_classes=7)
    static = check_eval(model, (_images(0),), (_images(1),))
    assert static(_images(0)).shape == [2, 7]


@pytest.mark.slow
def test_resnet50_and_vgg16_features_eval_eager_equals_static():
    rt.seed(3)
    check_eval(models.resnet50(num_classes=5), (_images(0, n=1),))
    check_eval(models.vgg16(batch_norm=True, num_classes=0, with_pool=False),
               (_images(1, n=1),))


def test_mobilenet_v2_eval_eager_equals_static_and_headless_shape():
    rt.seed(4)
    check_eval(models.mobilenet_v2(scale=0.35, num_classes=3), (_images(0),), (_images(1),))
    trunk = models.MobileNetV2(scale=0.35, num_classes=0, with_pool=False)
    assert trunk(_images(2)).shape == [2, 1280, 1, 1]


@pytest.mark.parametrize("build", [models.resnet18, models.resnet34, models.resnet50,
                                   models.mobilenet_v2, models.vgg16])
def test_pretrained_weights_are_refused_with_the_reason(build):
    with pytest.raises(ValueError, match=r"pretrained=True\): runtime has no pretrained "
                                         r"weights and downloads nothing"):
        build(pretrained=True)


def test_unsupported_resnet_configurations_are_refused():
    with pytest.raises(ValueError, match="ResNet: depth must be one of"):
        models.ResNet(models.BasicBlock, 20)
    with pytest.raises(ValueError, match="only width=64 and groups=1"):
        models.ResNet(models.BottleneckBlock, 50, width=4, groups=32)
