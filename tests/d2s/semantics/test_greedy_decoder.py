"""A greedy decoder as model code writes it: a tensor `while` with a `break` once every row
has finished, tokens appended to a list (a tensor array), `rt.stack` and `len` after the loop.
Inputs that stop at once, early and at `max_len` go through one program; an empty result
raises the error eager `rt.stack([])` raises (`OpError`, a `ValueError`)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.ops.registry import OpError

EOS = 3


class GreedyDecoder(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = rt.nn.Embedding(10, 4)
        self.cell = rt.nn.Linear(8, 4)
        self.out = rt.nn.Linear(4, 10)

    def forward(self, h, max_len):
        tok = rt.zeros([h.shape[0]], "int64")
        outs = []
        finished = rt.zeros([h.shape[0]], "bool")
        t = 0
        while t < max_len:
            e = self.emb(tok)
            h = rt.tanh(self.cell(rt.concat([e, h], axis=-1)))
            tok = rt.argmax(self.out(h), axis=-1)
            outs.append(tok)
            finished = rt.logical_or(finished, tok == EOS)
            if rt.all(finished):
                break
            t += 1
        return rt.stack(outs, axis=1), len(outs)


def reference(layer, h, max_len):
    """The same decoder in NumPy, from the layer's weights."""
    emb = layer.emb.weight.numpy()
    wc, bc = layer.cell.weight.numpy(), layer.cell.bias.numpy()
    wo, bo = layer.out.weight.numpy(), layer.out.bias.numpy()
    tok = np.zeros(h.shape[0], "int64")
    finished = np.zeros(h.shape[0], bool)
    outs = []
    for _ in range(max_len):
        h = np.tanh(np.concatenate([emb[tok], h], -1) @ wc + bc)
        tok = np.argmax(h @ wo + bo, -1)
        outs.append(tok)
        finished |= tok == EOS
        if finished.all():
            break
    return np.stack(outs, 1), len(outs)


def test_greedy_decoder_eager_static_numpy():
    rt.seed(3)
    eager = GreedyDecoder()
    static = d2s.to_static(GreedyDecoder())
    static.set_state_dict(eager.state_dict())
    lengths = set()
    for seed, scale, max_len in [(0, 1.0, 5), (1, 3.0, 7), (2, 1.0, 1), (5, 0.1, 9)]:
        h = (np.random.RandomState(seed).randn(2, 4) * scale).astype("float32")
        want, n = reference(eager, h, max_len)
        lengths.add(n)
        for m in (eager, static):
            toks, count = m(rt.to_tensor(h), rt.to_tensor(np.array(max_len)))
            np.testing.assert_array_equal(toks.numpy(), want)
            assert int(count) == n
    assert len(static.forward.program_cache) == 1 and len(lengths) > 1


def test_an_empty_result_raises_the_error_eager_raises():
    rt.seed(3)
    h = rt.to_tensor(np.ones((2, 4), "float32"))
    zero = rt.to_tensor(np.array(0))
    for m in (GreedyDecoder(), d2s.to_static(GreedyDecoder())):
        with pytest.raises(OpError, match="stack: x must be a non-empty list"):
            m(h, zero)
