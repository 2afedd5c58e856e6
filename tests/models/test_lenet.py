"""LeNet: eager vs to_static (eval, 5 training steps, dynamic batch) for both image sizes."""
import numpy as np
import pytest
from zoo_harness import check_dynamic_batch, check_eval, check_training

import runtime as rt
from examples.models import LeNet
from runtime.static import InputSpec


def images(n, side, seed):
    return rt.to_tensor(np.random.RandomState(seed).rand(n, 1, side, side).astype("float32"))


@pytest.mark.parametrize("side", [8, 28])
def test_lenet_eval(side):
    rt.seed(1)
    static = check_eval(LeNet(image_size=side), (images(4, side, 0),), (images(3, side, 1),))
    # The Python condition on the config stays Python: one pooling op per configured stage.
    text = str(static.forward.concrete_program.main_program)
    assert text.count("= max_pool2d(") == (1 if side == 8 else 2)
    assert " cond(" not in text


@pytest.mark.parametrize("side", [8, 28])
def test_lenet_training(side):
    rt.seed(2)
    rng = np.random.RandomState(3)
    batches = [(images(8, side, s), rt.to_tensor(rng.randint(0, 10, 8).astype("int64")))
               for s in range(5)]
    loss_fn = rt.nn.CrossEntropyLoss()
    check_training(LeNet(image_size=side), batches, lambda m, x, y: loss_fn(m(x), y))


def test_lenet_dynamic_batch():
    rt.seed(3)
    check_dynamic_batch(LeNet(image_size=8), [InputSpec([None, 1, 8, 8], "float32")],
                        (images(2, 8, 0),), (images(5, 8, 1),))
