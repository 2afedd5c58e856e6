"""ResNet and MobileNet: eager vs to_static (eval with BN statistics, 5 training steps with
BN in training mode, dynamic batch)."""
import numpy as np
import pytest
from zoo_harness import (
    check_buffers_after_training,
    check_dynamic_batch,
    check_eval,
    check_training,
)

import runtime as rt
from examples.models import MobileNet, ResNet
from runtime.static import InputSpec

MODELS = {
    "resnet": lambda: ResNet(widths=(8, 16), blocks_per_stage=2),
    "mobilenet": lambda: MobileNet(width=0.5),
}


def images(n, seed):
    return rt.to_tensor(np.random.RandomState(seed).randn(n, 3, 16, 16).astype("float32"))


def warmed(make):
    """A model whose BN running statistics are no longer the initial 0 / 1."""
    model = make()
    with rt.no_grad():
        model(images(8, 99))
    return model


@pytest.mark.parametrize("name", MODELS)
def test_eval(name):
    rt.seed(0)
    check_eval(warmed(MODELS[name]), (images(4, 0),), (images(2, 1),))


def test_resnet_shortcut_is_chosen_by_config():
    rt.seed(0)
    model = ResNet(widths=(8, 16), blocks_per_stage=2)
    assert [b.project for b in model.blocks] == [False, False, True, False]
    static = check_eval(warmed(lambda: model), (images(2, 0),))
    text = str(static.forward.concrete_program.main_program)
    # 1 stem + 2 per block + 1 projection; no graph branch for the Python condition
    assert text.count("= conv2d(") == 1 + 2 * 4 + 1 and " cond(" not in text


def training_data():
    rng = np.random.RandomState(2)
    batches = [(images(6, s), rt.to_tensor(rng.randint(0, 10, 6).astype("int64")))
               for s in range(5)]
    loss_fn = rt.nn.CrossEntropyLoss()
    return batches, lambda m, x, y: loss_fn(m(x), y)


@pytest.mark.parametrize("name", MODELS)
def test_training(name):
    rt.seed(1)
    check_training(MODELS[name](), *training_data())


@pytest.mark.parametrize("name", MODELS)
def test_batchnorm_statistics_after_training(name):
    rt.seed(1)
    check_buffers_after_training(MODELS[name](), *training_data())


@pytest.mark.parametrize("name", MODELS)
def test_dynamic_batch(name):
    rt.seed(2)
    check_dynamic_batch(warmed(MODELS[name]), [InputSpec([None, 3, 16, 16], "float32")],
                        (images(2, 0),), (images(5, 1),))
