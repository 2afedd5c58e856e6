"""Every inference model of the zoo (examples/models) exported to ONNX and run in onnxruntime:
outputs equal the executor's for two batch sizes through one exported model (the batch dim
is a dynamic axis), and decoding loops that run for different numbers of steps."""
from __future__ import annotations

import numpy as np
import pytest
from onnx_harness import check_parity, op_types

import d2s
import runtime as rt
from examples import models as zoo
from runtime.static import InputSpec


def _f32(seed, *shape):
    return rt.to_tensor(np.random.RandomState(seed).randn(*shape).astype("float32"))


def _ids(seed, high, *shape, low=0):
    return rt.to_tensor(np.random.RandomState(seed).randint(low, high, shape).astype("int64"))


def _warm(model, *inputs):
    """Move BatchNorm statistics away from their initial values, then eval."""
    with rt.no_grad():
        model(*inputs)
    return model.eval()


def _padded(seed, n, vocab=60, t=8):
    rng = np.random.RandomState(seed)
    ids = rng.randint(1, vocab, (n, t))
    ids[np.arange(t)[None, :] >= rng.randint(1, t + 1, n)[:, None]] = 0
    return rt.to_tensor(ids.astype("int64"))


def _utterances(seed, n, t=20, f=8):
    rng = np.random.RandomState(seed)
    lengths = rng.randint(4, t + 1, n)
    x = rng.randn(n, t, f).astype("float32")
    x[np.arange(t)[None, :] >= lengths[:, None]] = 0.0
    return rt.to_tensor(x), rt.to_tensor(lengths.astype("int64"))


CASES = {
    "lenet8": (lambda: zoo.LeNet(image_size=8), [InputSpec([None, 1, 8, 8])],
               [(_f32(0, 3, 1, 8, 8),), (_f32(1, 5, 1, 8, 8),)]),
    "lenet28": (lambda: zoo.LeNet(image_size=28), [InputSpec([None, 1, 28, 28])],
                [(_f32(0, 2, 1, 28, 28),), (_f32(1, 4, 1, 28, 28),)]),
    "resnet": (lambda: _warm(zoo.ResNet(widths=(8, 16), blocks_per_stage=2), _f32(9, 6, 3, 16,
                                                                                  16)),
               [InputSpec([None, 3, 16, 16])], [(_f32(0, 2, 3, 16, 16),),
                                                (_f32(1, 3, 3, 16, 16),)]),
    "mobilenet": (lambda: _warm(zoo.MobileNet(width=0.5), _f32(9, 6, 3, 16, 16)),
                  [InputSpec([None, 3, 16, 16])], [(_f32(0, 2, 3, 16, 16),),
                                                   (_f32(1, 3, 3, 16, 16),)]),
    "lstm_lm": (lambda: zoo.LSTMLanguageModel(40, 16, 16), [InputSpec([None, 6], "int64")],
                [(_ids(0, 40, 3, 6),), (_ids(1, 40, 5, 6),)]),
    "bert_cls": (lambda: zoo.BertClassifier(60, pooling="cls"), [InputSpec([None, 8], "int64")],
                 [(_padded(0, 4),), (_padded(1, 2),)]),
    "bert_mean": (lambda: zoo.BertClassifier(60, pooling="mean"),
                  [InputSpec([None, 8], "int64")], [(_padded(0, 4),), (_padded(1, 2),)]),
    "deepfm": (lambda: zoo.DeepFM((10, 8, 6, 4), num_dense=3),
               [InputSpec([None, 4], "int64"), InputSpec([None, 3])],
               [(rt.to_tensor(np.stack([np.random.RandomState(0).randint(0, s, 5)
                                        for s in (10, 8, 6, 4)], 1)), _f32(0, 5, 3)),
                (rt.to_tensor(np.stack([np.random.RandomState(1).randint(0, s, 2)
                                        for s in (10, 8, 6, 4)], 1)), _f32(1, 2, 3))]),
    "speech": (lambda: _warm(zoo.SpeechClassifier(8), *_utterances(99, 8)),
               [InputSpec([None, 20, 8]), InputSpec([None], "int64")],
               [_utterances(0, 4), _utterances(1, 3)]),
}


@pytest.mark.parametrize("name", CASES)
def test_zoo_model_in_onnxruntime(name):
    make, specs, input_sets = CASES[name]
    rt.seed(0)
    model = make()
    model.eval()
    proto, _ = check_parity(d2s.to_static(model), specs, *input_sets)
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param and not dims[0].dim_value  # the None batch dim stays dynamic


# ---- Seq2Seq: teacher forcing, and decoding loops (while -> Loop, arrays -> sequences) ------

VOCAB = 12
_rng = np.random.RandomState(0)
SRC = _rng.randint(3, VOCAB, (8, 5)).astype("int64")
LEN = np.array([5, 3, 4, 1, 2, 5, 5, 2], "int64")
EARLY, ALL = [1, 7], list(range(8))  # rows 1 and 7 stop early (see tests/models)


def _seq2seq():
    from examples.models.seq2seq import EOS
    rt.seed(0)
    m = zoo.Seq2Seq(vocab_size=VOCAB)
    bias = m.classifier.bias.numpy().copy()
    bias[EOS] = 0.0
    m.classifier.bias.set_value(bias)
    return m.eval()


def _rows(rows):
    return rt.to_tensor(SRC[rows]), rt.to_tensor(LEN[rows])


@pytest.mark.parametrize("method", ["greedy_search", "beam_search"])
def test_seq2seq_decoding_loop_in_onnxruntime(method):
    m = _seq2seq()
    fn = d2s.to_static(getattr(m, method))
    specs = [InputSpec([None, 5], "int64"), InputSpec([None], "int64")]
    proto, outs = check_parity(fn, specs, _rows(EARLY), _rows(ALL))
    assert "Loop" in op_types(proto)
    # the loop ran for different numbers of steps on the two batches
    assert outs[0][0].shape[1] < outs[1][0].shape[1]


def test_seq2seq_teacher_forcing_in_onnxruntime():
    m = _seq2seq()
    tgt = np.random.RandomState(0).randint(3, VOCAB, (8, 6)).astype("int64")
    specs = [InputSpec([None, 5], "int64"), InputSpec([None], "int64"),
             InputSpec([None, 6], "int64")]
    check_parity(d2s.to_static(m), specs, _rows(EARLY) + (rt.to_tensor(tgt[EARLY]),),
                 _rows(ALL) + (rt.to_tensor(tgt),))
