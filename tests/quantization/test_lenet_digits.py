"""PTQ and QAT on LeNet / the 8x8 digits (issue 20 item 5, issue 14 item 4): accuracy against
float, int8 inference models that match the fake-quant model, 4x smaller weights on disk, and
the int8 model in onnxruntime as QuantizeLinear/DequantizeLinear pairs."""
from __future__ import annotations

import copy
import os

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the digits ship with scikit-learn (the demo extra)")

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from digits import accuracy, batches, fit, logits, trained_lenet  # noqa: E402

Q = rt.quantization
SPEC = [d2s.InputSpec([None, 1, 8, 8], "float32")]


@pytest.fixture(scope="module")
def lenet():
    return trained_lenet()


def calibrated(model, x, y, config, n_batches=10):
    ptq = Q.PTQ(config)
    observed = ptq.quantize(model)
    for xb, _ in batches(x, y, seed=99, n=n_batches):
        observed(xb)
    return ptq, observed


@pytest.mark.parametrize("observer", [Q.AbsmaxObserver(), Q.MovingAverageAbsmaxObserver(),
                                      Q.HistObserver(percent=0.9999)],
                         ids=["abs_max", "moving_average", "histogram_percentile"])
def test_ptq_with_ten_calibration_batches_is_within_1_5_points(lenet, observer):
    model, (x, y, xt, yt) = lenet
    float_acc = accuracy(model, xt, yt)
    assert float_acc > 95
    ptq, observed = calibrated(model, x, y, Q.QuantConfig(activation=observer))
    # observers only watch (a copy: test images must not calibrate the model under test)
    np.testing.assert_array_equal(logits(copy.deepcopy(observed), xt), logits(model, xt))
    int8 = ptq.convert(observed)
    assert type(int8.fc1).__name__ == "Int8Linear" and int8.fc1.weight.dtype == rt.int8
    assert type(int8.conv1).__name__ == "Int8Conv2D"
    int8_acc = accuracy(int8, xt, yt)
    print(f"PTQ {type(observer).__name__}: float {float_acc:.2f}%, int8 {int8_acc:.2f}%")
    assert int8_acc >= float_acc - 1.5


def test_qat_is_within_1_point_and_int8_matches_fake_quant(lenet):
    model, (x, y, xt, yt) = lenet
    rt.seed(5)
    # the float baseline gets the same extra epoch as the QAT fine-tuning
    float_model = fit(copy.deepcopy(model), x, y, 1, lr=0.001, seed=50)
    qat = Q.QAT(Q.QuantConfig())
    qmodel = fit(qat.quantize(model), x, y, 1, lr=0.001, seed=50)
    float_acc, qat_acc = accuracy(float_model, xt, yt), accuracy(qmodel, xt, yt)
    int8 = qat.convert(qmodel)
    int8_acc = accuracy(int8, xt, yt)
    print(f"QAT: float {float_acc:.2f}%, fake-quant {qat_acc:.2f}%, int8 {int8_acc:.2f}%")
    assert qat_acc >= float_acc - 1.0
    # int8 weights dequantize to the fake-quant grid: the same outputs
    got, want = logits(int8, xt), logits(qmodel, xt)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    assert int8_acc == qat_acc
    # converted (to_static) int8 model: the same program values
    static = d2s.to_static(copy.deepcopy(int8))
    np.testing.assert_allclose(logits(static, xt[:7]), got[:7], rtol=0, atol=1e-5)


def _npz_bytes(path):
    with np.load(path) as f:
        return {n: f[n].nbytes for n in f.files}, {n: f[n].dtype for n in f.files}


def test_int8_save_is_4x_smaller_and_loads(lenet, tmp_path):
    model, (x, y, xt, yt) = lenet
    ptq, observed = calibrated(model, x, y, Q.QuantConfig())
    int8 = ptq.convert(observed)
    d2s.save(model, str(tmp_path / "float"), input_spec=SPEC)
    d2s.save(int8, str(tmp_path / "int8"), input_spec=SPEC)
    fsize = os.path.getsize(tmp_path / "float.npz")
    qsize = os.path.getsize(tmp_path / "int8.npz")
    fbytes, _ = _npz_bytes(tmp_path / "float.npz")
    qbytes, qtypes = _npz_bytes(tmp_path / "int8.npz")
    weights = [n for n, t in qtypes.items() if t == np.int8]
    assert len(weights) == 5  # conv1, conv2, fc1, fc2, fc3
    f_w = sum(b for n, b in fbytes.items() if n.endswith(".w_0") or "weight" in n)
    q_w = sum(qbytes[n] for n in weights)
    print(f"parameter file: float32 {fsize} B, int8 {qsize} B ({fsize / qsize:.2f}x); "
          f"weights {f_w} B -> {q_w} B ({f_w / q_w:.2f}x)")
    assert f_w == 4 * q_w
    assert fsize / qsize > 2.8  # biases and scales stay float32, plus per-array zip headers
    loaded = d2s.load(str(tmp_path / "int8"))
    np.testing.assert_allclose(loaded(rt.to_tensor(xt)).numpy(), logits(int8, xt), rtol=0,
                               atol=1e-5)


def test_int8_model_runs_in_onnxruntime_as_qdq(lenet, tmp_path):
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    import d2s.onnx
    model, (x, y, xt, yt) = lenet
    ptq, observed = calibrated(model, x, y, Q.QuantConfig())
    int8 = ptq.convert(observed)
    path = d2s.onnx.export(int8, str(tmp_path / "lenet_int8"), input_spec=SPEC)
    proto = onnx.load(path)
    kinds = [n.op_type for n in proto.graph.node]
    assert kinds.count("DequantizeLinear") == 10 and kinds.count("QuantizeLinear") == 5
    assert sum(i.data_type == onnx.TensorProto.INT8 and len(i.dims) > 1
               for i in proto.graph.initializer) == 5
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": xt})[0]
    want = logits(int8, xt)
    # ONNX QuantizeLinear rounds ties to even (ours: away from zero), so an activation exactly
    # half-way between two grid values may land one step away; predictions agree
    assert np.abs(got - want).max() < 0.1 * np.abs(want).max()
    assert (got.argmax(1) == want.argmax(1)).mean() > 0.99


def test_convert_before_calibration_raises(lenet):
    model, _ = lenet
    observed = Q.PTQ().quantize(model)
    with pytest.raises(ValueError, match=r"layer 'conv1' .* has never seen data.*calibration"):
        Q.PTQ().convert(observed)
    with pytest.raises(ValueError, match=r"layer 'conv1' .*FakeQuanterMovingAverageAbsMax.* "
                                         r"never seen data"):
        Q.QAT().convert(Q.QAT().quantize(model))


class FixedScale(Q.BaseObserver):
    """A user-written observer: a fixed activation range."""

    def __init__(self, scale):
        super().__init__(8)
        self.value = scale

    def observe(self, a):
        pass

    def scales(self):
        return rt.to_tensor([self.value])


def test_custom_observer_is_used_by_convert(lenet):
    model, (x, y, xt, yt) = lenet
    ptq, observed = calibrated(model, x, y, Q.QuantConfig(activation=FixedScale(4.0)), 1)
    int8 = ptq.convert(observed)
    assert float(int8.fc2.activation_scale) == 4.0
    with pytest.raises(TypeError, match="observer or quanter instance"):
        Q.QuantConfig(activation=Q.AbsmaxObserver)  # the class, not an instance
