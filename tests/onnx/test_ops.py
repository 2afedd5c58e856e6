"""Op-by-op parity of the ONNX mapping: each case is a small user function run by the
executor and by onnxruntime on inputs with negative, zero and positive values."""
from __future__ import annotations

import numpy as np
import pytest
from onnx_harness import check_parity

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.static import InputSpec

X = np.array([[-2.5, -1.0, 0.0, 0.5], [1.5, 2.0, -0.25, 3.0], [0.0, -3.5, 4.0, 1.0]],
             "float32")
IMG = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32")

CASES = {
    "unary": lambda x: (rt.exp(x), rt.log(rt.abs(x) + 1), rt.sqrt(rt.abs(x)), rt.rsqrt(
        rt.abs(x) + 1), rt.floor(x), rt.ceil(x), rt.sign(x), rt.sin(x), rt.cos(x), rt.erf(x),
        -x, rt.log1p(rt.abs(x)), rt.square(x)),
    "activations": lambda x: (F.relu(x), F.sigmoid(x), rt.tanh(x), F.gelu(x),
                              F.gelu(x, approximate=True), F.silu(x), F.relu6(x * 3),
                              F.leaky_relu(x, 0.2), F.softplus(x), F.softplus(x, beta=2.0),
                              F.softmax(x, -1), F.log_softmax(x, 0), F.hardtanh(x, -0.5, 2.0)),
    "binary": lambda x: (x + 1, 2 - x, x * x, x / 2, rt.maximum(x, x * 0.5),
                         rt.minimum(x, 0.25), rt.pow(rt.abs(x), 1.5), x ** 2),
    "compare": lambda x: (x > 0, x >= 0, x < 0.5, x <= 0, x == 0, x != 0,
                          rt.logical_and(x > 0, x < 2), rt.logical_or(x < -1, x > 1),
                          rt.logical_not(x > 0), rt.where(x > 0, x, x * 0.1),
                          rt.logical_xor(x > 0, x > 1), rt.isnan(x / x), rt.isinf(1 / x),
                          rt.bitwise_and(rt.cast(x, "int64"), 3),
                          rt.bitwise_or(x > 1, x < -1)),
    "reduce": lambda x: (rt.sum(x), rt.sum(x, axis=1), rt.mean(x, axis=0, keepdim=True),
                         rt.max(x, axis=1), rt.min(x), rt.prod(x + 4, axis=1),
                         rt.argmax(x, axis=1), rt.argmin(x, axis=0), rt.all(x > -4),
                         rt.any(x > 3.5, axis=1), rt.cumsum(x, axis=1),
                         rt.topk(x, 2)[0], rt.topk(x, 2)[1]),
    "clip_scale_cast": lambda x: (rt.clip(x, -1.0, 2.0), rt.clip(x, min=0.0),
                                  rt.scale(x, 2.0, 1.0), rt.scale(x, 2.0, 1.0, False),
                                  rt.cast(x * 10, "int32"), rt.cast(x, "bool")),
    "shape": lambda x: (rt.reshape(x, [4, 3]), rt.transpose(x, [1, 0]), rt.flatten(x),
                        rt.unsqueeze(x, [0, 2]), rt.squeeze(rt.unsqueeze(x, 1), 1),
                        rt.concat([x, x * 2], axis=0), rt.stack([x, -x], axis=1),
                        rt.split(x, [1, 3], axis=1)[1], rt.split(x, 2, axis=1)[0],
                        rt.tile(x, [2, 1]), rt.expand(x[:1], [3, 4]),
                        rt.gather(x, rt.to_tensor([2, 0]), axis=0),
                        rt.full_like(x, 7.0), rt.zeros_like(x), rt.ones_like(x),
                        rt.expand_as(x[:1], x), rt.broadcast_to(x[:, :1], [3, 4]),
                        rt.assign(x)),
    "matmul": lambda x: (rt.matmul(x, x, transpose_y=True), rt.matmul(x, x, transpose_x=True),
                         F.linear(x, rt.ones([4, 2]), rt.to_tensor([0.5, -0.5]))),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # x / x and 1 / x at 0, on purpose
@pytest.mark.parametrize("name", CASES)
def test_op_parity(name):
    fn = CASES[name]
    proto, _ = check_parity(d2s.to_static(fn), [InputSpec([3, 4])], (rt.to_tensor(X),),
                            atol=1e-5)


def test_pooling_and_norms():
    rt.seed(0)
    ln = rt.nn.LayerNorm(6)
    emb = rt.nn.Embedding(10, 3, padding_idx=0)

    def f(x, ids):
        return (F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, stride=2, padding=1),
                F.avg_pool2d(x, 3, stride=2, padding=1, exclusive=False),
                F.max_pool2d(x, 3, stride=2, padding=1), F.adaptive_avg_pool2d(x, 3),
                ln(x), F.layer_norm(x, [6]), emb(ids))

    ids = rt.to_tensor(np.array([[0, 3, 9], [1, 0, 2]], "int64"))
    check_parity(d2s.to_static(f), [InputSpec([None, 3, 6, 6]), InputSpec([2, 3], "int64")],
                 (rt.to_tensor(IMG), ids))


def test_integer_arithmetic_and_creation():
    @d2s.to_static
    def f(n, v):
        r = rt.arange(0, 10, 2, dtype="int64")
        return (r * n, rt.full([2, 3], 4, "int32"), rt.arange(1, 4, 1, dtype="float32") * v,
                v * 2 + 1, rt.reshape(rt.arange(0, 6, 1, dtype="int64"), [2, -1]))

    check_parity(f, [InputSpec([1], "int64"), InputSpec([1])],
                 (rt.to_tensor(np.array([3])), rt.to_tensor(np.array([0.5], "float32"))))


def test_more_reductions_indexing_and_convolutions():
    rt.seed(1)
    w = rt.randn([6, 1, 3, 3])

    def f(x, img):
        return (rt.argmax(x), rt.argmax(x, keepdim=True), rt.mean(x),
                rt.squeeze(rt.reshape(x, [1, 3, 1, 4])), x[..., 1], x[1:, ...][:, None],
                F.conv2d(img, w, padding="SAME", groups=3), F.conv2d(img, w[:, :, :2],
                                                                     stride=2, groups=3))

    check_parity(d2s.to_static(f), [InputSpec([3, 4]), InputSpec([None, 3, 6, 6])],
                 (rt.to_tensor(X), rt.to_tensor(IMG)))


@pytest.mark.parametrize("weight, activation", [("abs_max", "abs_max"),
                                                ("channel_wise_abs_max", "abs_max")])
def test_int8_per_tensor_weights_and_dynamic_activations(weight, activation):
    Q = rt.quantization
    rt.seed(2)
    model = rt.nn.Sequential(rt.nn.Conv2D(3, 4, 3), rt.nn.ReLU(), rt.nn.Flatten(),
                             rt.nn.Linear(64, 5))
    qat = Q.QAT(Q.QuantConfig(weight_quantize_type=weight, activation_quantize_type=activation))
    int8 = qat.convert(qat.quantize(model))
    assert int8[0].activation_scale is None  # abs_max activations: scale of each input
    got_proto, outs = check_parity(int8, [InputSpec([None, 3, 6, 6])], (rt.to_tensor(IMG),),
                                   atol=0.05)
    kinds = [n.op_type for n in got_proto.graph.node]
    assert kinds.count("QuantizeLinear") == 2 and kinds.count("DequantizeLinear") == 4


def test_lstm_layers_become_onnx_lstm_nodes():
    # a bidirectional two-layer LSTM from given states, batch unknown: one ONNX LSTM per
    # direction and layer (gate blocks reordered), checked at batch 1 and 3
    rt.seed(3)
    net = rt.nn.LSTM(4, 5, num_layers=2, direction="bidirect")
    net.eval()
    rng = np.random.default_rng(3)

    def inputs(batch):
        return tuple(rt.to_tensor(rng.standard_normal(s).astype("float32")) for s in
                     ((batch, 6, 4), (4, batch, 5), (4, batch, 5)))

    def f(x, h0, c0):
        out, (h, c) = net(x, (h0, c0))
        return out, h, c

    specs = [InputSpec([None, 6, 4]), InputSpec([4, None, 5]), InputSpec([4, None, 5])]
    proto, _ = check_parity(d2s.to_static(f), specs, inputs(1), inputs(3))
    assert [n.op_type for n in proto.graph.node].count("LSTM") == 4


@pytest.mark.parametrize("bias", [True, False])
def test_gru_layers_become_onnx_gru_nodes(bias):
    # a bidirectional two-layer GRU from a given state over sequences of different lengths
    # (a row of the full length, one that ends early, one longer than the input), batch
    # unknown: one ONNX GRU per direction and layer, checked at batch 1 and 3
    rt.seed(4)
    net = rt.nn.GRU(4, 5, num_layers=2, direction="bidirect",
                    bias_hh_attr=None if bias else False)
    net.eval()
    rng = np.random.default_rng(4)

    def inputs(batch):
        x, h0 = (rt.to_tensor(rng.standard_normal(s).astype("float32"))
                 for s in ((batch, 6, 4), (4, batch, 5)))
        return x, h0, rt.to_tensor(np.array([6, 2, 9][:batch], "int64"))

    def f(x, h0, lengths):
        out, h = net(x, h0, sequence_length=lengths)
        return out, h

    specs = [InputSpec([None, 6, 4]), InputSpec([4, None, 5]), InputSpec([None], "int64")]
    proto, _ = check_parity(d2s.to_static(f), specs, inputs(1), inputs(3))
    assert [n.op_type for n in proto.graph.node].count("GRU") == 4
