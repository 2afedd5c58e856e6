"""Forward hooks are part of the saved model: every zoo model with a pre-hook and a post-hook
on the Layer itself is saved, reloaded and compared with the live Layer."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from examples.models import (BertClassifier, DeepFM, LeNet, LSTMLanguageModel, MobileNet,
                             ResNet, Seq2Seq, SpeechClassifier)
from runtime.static import InputSpec

rng = np.random.RandomState(0)


def floats(*shape):
    return rt.to_tensor(rng.rand(*shape).astype("float32"))


def ints(high, *shape):
    return rt.to_tensor(rng.randint(1, high, shape).astype("int64"))


def _speech_inputs():
    return floats(2, 12, 8), rt.to_tensor(np.array([12, 7], "int64"))


def _seq2seq_inputs():
    return ints(12, 2, 5), rt.to_tensor(np.array([5, 3], "int64")), ints(12, 2, 4)


# name -> (model factory, example inputs, pre-hook): pre-hooks change float inputs by scaling
# them and token inputs by reversing them, so a dropped hook changes the answer.
ZOO = {
    "lenet": (lambda: LeNet(image_size=28), lambda: (floats(2, 1, 28, 28),), "scale"),
    "resnet": (lambda: ResNet(), lambda: (floats(2, 3, 16, 16),), "scale"),
    "mobilenet": (lambda: MobileNet(width=0.5), lambda: (floats(2, 3, 16, 16),), "scale"),
    "bert": (lambda: BertClassifier(), lambda: (ints(60, 2, 8),), "flip"),
    "deepfm": (lambda: DeepFM((10, 8, 6, 4), num_dense=3),
               lambda: (rt.to_tensor(np.stack([rng.randint(0, s, 2) for s in (10, 8, 6, 4)],
                                              1).astype("int64")), floats(2, 3)), "scale_last"),
    "lstm_lm": (lambda: LSTMLanguageModel(vocab_size=40), lambda: (ints(40, 2, 6),), "flip"),
    "seq2seq": (lambda: Seq2Seq(vocab_size=12), _seq2seq_inputs, "flip"),
    "speech": (lambda: SpeechClassifier(), _speech_inputs, "scale"),
}


def _pre_hook(kind):
    def scale(layer, inputs):
        return (inputs[0] * 0.5,) + tuple(inputs[1:])

    def scale_last(layer, inputs):
        return tuple(inputs[:-1]) + (inputs[-1] * 0.5,)

    def flip(layer, inputs):
        return (rt.flip(inputs[0], axis=[1]),) + tuple(inputs[1:])

    return {"scale": scale, "scale_last": scale_last, "flip": flip}[kind]


def post_hook(layer, inputs, outputs):
    if isinstance(outputs, (tuple, list)):
        return (outputs[0] * 0.25 + 1.0,) + tuple(outputs[1:])
    return outputs * 0.25 + 1.0


def _first(x):
    return x[0] if isinstance(x, (tuple, list)) else x


@pytest.mark.parametrize("name", sorted(ZOO))
def test_a_saved_zoo_model_keeps_its_hooks(name, tmp_path):
    make, inputs_of, pre = ZOO[name]
    rt.seed(0)
    model = make()
    model.eval()
    inputs = inputs_of()
    plain = _first(model(*inputs)).numpy()
    model.register_forward_pre_hook(_pre_hook(pre))
    model.register_forward_post_hook(post_hook)
    live = _first(model(*inputs)).numpy()
    assert not np.allclose(live, plain)  # the hooks matter for this model and input
    spec = [InputSpec(list(x.shape), x.dtype) for x in inputs]
    d2s.save(d2s.to_static(model), str(tmp_path / name), input_spec=spec)
    loaded = d2s.load(str(tmp_path / name))
    np.testing.assert_allclose(_first(loaded(*inputs)).numpy(), live, rtol=1e-5, atol=1e-5)
    # the live converted Layer runs its hooks once (Layer.__call__), as eager code does
    np.testing.assert_allclose(_first(model(*inputs)).numpy(), live, rtol=1e-5, atol=1e-5)


class _Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


def test_a_saved_model_without_input_spec_keeps_its_hooks(tmp_path):
    net = _Net()
    net.register_forward_post_hook(lambda layer, inputs, out: out * 4)
    static = d2s.to_static(net)
    x = floats(2, 3)
    live = static(x).numpy()
    d2s.save(static, str(tmp_path / "m"))
    np.testing.assert_allclose(d2s.load(str(tmp_path / "m"))(x).numpy(), live, rtol=1e-6)


def test_a_hook_that_cannot_be_captured_is_a_save_time_error_naming_it(tmp_path):
    net = _Net()

    def log_to_numpy(layer, inputs, out):
        return out * float(np.polyfit(out[0], out[1], 1)[0])  # NumPy that no program computes

    net.register_forward_post_hook(log_to_numpy)
    static = d2s.to_static(net)
    with pytest.raises(d2s.ConversionError, match="log_to_numpy"):
        d2s.save(static, str(tmp_path / "m"), input_spec=[InputSpec([2, 3], "float32")])


def test_a_hook_computing_in_numpy_on_its_output_is_saved(tmp_path):
    """`np.asarray(out) * 2` in a hook is NumPy's of the output (no gradient path), which a
    program computes: saved, the model gives the live result (it was a save-time error)."""
    net = _Net()
    net.register_forward_post_hook(lambda layer, inputs, out: rt.to_tensor(np.asarray(out) * 2))
    static = d2s.to_static(net)
    x = floats(2, 3)
    live = static(x).numpy()
    np.testing.assert_allclose(live, net.fc(x).numpy() * 2, rtol=1e-6)
    d2s.save(static, str(tmp_path / "m"), input_spec=[InputSpec([2, 3], "float32")])
    np.testing.assert_allclose(d2s.load(str(tmp_path / "m"))(x).numpy(), live, rtol=1e-6)
