"""Recurrent layers and attention against hand-written NumPy loops, with float64 gradient
checks on tiny shapes."""
from __future__ import annotations

import numpy as np
import pytest
from layer_gradcheck import check_grads

import runtime as rt
from runtime import nn


def randn(*shape):
    return rt.to_tensor(np.random.randn(*shape).astype("float32"))


def sig(x):
    return 1 / (1 + np.exp(-x))


# ---- NumPy references (Paddle gate layouts) -----------------------------------------------

def np_simple(x, h, p, act=np.tanh):
    h = act(x @ p["weight_ih"].T + p["bias_ih"] + h @ p["weight_hh"].T + p["bias_hh"])
    return h, h


def np_lstm(x, state, p):
    h, c = state
    g = x @ p["weight_ih"].T + p["bias_ih"] + h @ p["weight_hh"].T + p["bias_hh"]
    i, f, cand, o = np.split(g, 4, axis=-1)
    c = sig(f) * c + sig(i) * np.tanh(cand)
    h = sig(o) * np.tanh(c)
    return h, (h, c)


def np_gru(x, h, p):
    xr, xz, xc = np.split(x @ p["weight_ih"].T + p["bias_ih"], 3, axis=-1)
    hr, hz, hc = np.split(h @ p["weight_hh"].T + p["bias_hh"], 3, axis=-1)
    r, z = sig(xr + hr), sig(xz + hz)
    c = np.tanh(xc + r * hc)
    h = (h - c) * z + c
    return h, h


def cell_params(cell):
    return {k: getattr(cell, k).numpy() for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}


def net_params(net, layer, suffix):
    return {k: getattr(net, f"{k}_l{layer}{suffix}").numpy()
            for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}


def np_run(step, p, x, state, lengths, reverse):
    """x [B, T, I]; steps past `lengths` keep the state and output zeros."""
    steps = x.shape[1]
    outs = [None] * steps
    for t in (reversed(range(steps)) if reverse else range(steps)):
        out, new = step(x[:, t], state, p)
        m = (t < lengths)[:, None]
        state = tuple(np.where(m, n, o) for n, o in zip(new, state)) if isinstance(
            new, tuple) else np.where(m, new, state)
        outs[t] = out * m
    return np.stack(outs, axis=1), state


def np_net(step, net, x, init, lengths, lstm):
    """Multi-layer, maybe bidirectional; init: list over layer*direction of states."""
    finals = []
    for layer in range(net.num_layers):
        outs = []
        for d in range(net.num_directions):
            k = layer * net.num_directions + d
            out, st = np_run(step, net_params(net, layer, "_reverse" if d else ""), x, init[k],
                             lengths, reverse=bool(d))
            outs.append(out)
            finals.append(st)
        x = np.concatenate(outs, axis=-1)
    if lstm:
        return x, (np.stack([h for h, _ in finals]), np.stack([c for _, c in finals]))
    return x, np.stack(finals)


# ---- cells --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, ref, lstm", [
    (nn.SimpleRNNCell, np_simple, False), (nn.LSTMCell, np_lstm, True),
    (nn.GRUCell, np_gru, False)])
def test_cell_one_step(cls, ref, lstm):
    cell = cls(3, 4).to(dtype="float64")
    gates = {nn.SimpleRNNCell: 1, nn.LSTMCell: 4, nn.GRUCell: 3}[cls]
    assert cell.weight_ih.shape == [gates * 4, 3] and cell.weight_hh.shape == [gates * 4, 4]
    bound = 1 / np.sqrt(4)
    assert np.abs(cell.weight_hh.numpy()).max() <= bound
    x = np.random.rand(2, 3)
    state = (np.random.rand(2, 4), np.random.rand(2, 4)) if lstm else np.random.rand(2, 4)
    tstate = tuple(rt.to_tensor(s) for s in state) if lstm else rt.to_tensor(state)
    out, new = cell(rt.to_tensor(x), tstate)
    want_out, want_state = ref(x, state, cell_params(cell))
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-12)
    if lstm:
        np.testing.assert_allclose(new[1].numpy(), want_state[1], rtol=1e-12)
    zero_out, _ = cell(rt.to_tensor(x))  # default initial state is zeros
    zeros = (np.zeros((2, 4)), np.zeros((2, 4))) if lstm else np.zeros((2, 4))
    np.testing.assert_allclose(zero_out.numpy(), ref(x, zeros, cell_params(cell))[0],
                               rtol=1e-12)
    inputs = [x, *state] if lstm else [x, state]
    fn = (lambda x, h, c: cell(x, (h, c))) if lstm else cell
    check_grads(fn, inputs, cell.parameters())


def test_simple_rnn_relu_cell():
    cell = nn.SimpleRNNCell(3, 4, activation="relu").to(dtype="float64")
    x, h = np.random.randn(2, 3), np.random.randn(2, 4)
    want, _ = np_simple(x, h, cell_params(cell), act=lambda v: np.maximum(v, 0))
    np.testing.assert_allclose(cell(rt.to_tensor(x), rt.to_tensor(h))[0].numpy(), want)


# ---- networks -----------------------------------------------------------------------------

def test_lstm_names_and_shapes():
    lstm = nn.LSTM(3, 4, num_layers=2, direction="bidirect")
    names = list(lstm.state_dict())
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                         "weight_ih_l0_reverse"]
    assert len(names) == 16 and len(lstm.parameters()) == 16
    assert lstm.weight_ih_l1.shape == [16, 8]  # layer 1 sees both directions
    out, (h, c) = lstm(randn(2, 5, 3))
    assert out.shape == [2, 5, 8] and h.shape == [4, 2, 4] and c.shape == [4, 2, 4]


@pytest.mark.parametrize("direction", ["forward", "bidirect"])
def test_lstm_sequence_vs_numpy(direction):
    lstm = nn.LSTM(3, 4, num_layers=2, direction=direction).to(dtype="float64")
    n = 2 * lstm.num_directions
    x = np.random.randn(3, 5, 3)
    h0, c0 = np.random.randn(n, 3, 4), np.random.randn(n, 3, 4)
    lengths = np.array([5, 2, 4])
    out, (h, c) = lstm(rt.to_tensor(x), (rt.to_tensor(h0), rt.to_tensor(c0)),
                       sequence_length=rt.to_tensor(lengths))
    want, (wh, wc) = np_net(np_lstm, lstm, x, list(zip(h0, c0)), lengths, lstm=True)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), wh, rtol=1e-10)
    np.testing.assert_allclose(c.numpy(), wc, rtol=1e-10)
    assert np.all(out.numpy()[1, 2:] == 0)  # past the end of sequence 1


@pytest.mark.parametrize("cls, step", [(nn.GRU, np_gru), (nn.SimpleRNN, np_simple)])
def test_gru_simple_rnn_time_major_vs_numpy(cls, step):
    net = cls(3, 4, direction="bidirect", time_major=True).to(dtype="float64")
    x = np.random.randn(4, 2, 3)  # [T, B, I]
    h0 = np.random.randn(2, 2, 4)
    out, h = net(rt.to_tensor(x), rt.to_tensor(h0))
    want, wh = np_net(step, net, x.transpose(1, 0, 2), list(h0), np.array([4, 4]), lstm=False)
    np.testing.assert_allclose(out.numpy(), want.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), wh, rtol=1e-10)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_rnn_gradients(cls):
    net = cls(2, 2, direction="bidirect").to(dtype="float64")
    lengths = rt.to_tensor(np.array([3, 2]))
    check_grads(lambda x: net(x, sequence_length=lengths), [np.random.randn(2, 3, 2)],
                net.parameters())


def test_rnn_dropout_between_layers_only_in_training():
    net = nn.GRU(3, 4, num_layers=2, dropout=0.5).to(dtype="float64")
    x = rt.to_tensor(np.random.randn(2, 3, 3))
    net.eval()
    a, b = net(x)[0].numpy(), net(x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    net.train()
    assert not np.allclose(net(x)[0].numpy(), a)


def test_rnn_wrapper_and_cell_initial_states():
    cell = nn.LSTMCell(3, 4)
    h, c = cell.get_initial_states(rt.ones([6, 3]), init_value=0.5)
    assert h.shape == [6, 4] and np.all(c.numpy() == 0.5)
    out, (h, c) = nn.RNN(cell, is_reverse=True)(randn(2, 5, 3))
    assert out.shape == [2, 5, 4] and h.shape == [2, 4]


# ---- attention ----------------------------------------------------------------------------

def np_mha(layer, q, k, v, mask=None):
    def proj(lin, x):
        return x @ lin.weight.numpy() + lin.bias.numpy()

    def heads(x):
        b, n, _ = x.shape
        return x.reshape(b, n, layer.num_heads, layer.head_dim).transpose(0, 2, 1, 3)

    qh, kh, vh = heads(proj(layer.q_proj, q)), heads(proj(layer.k_proj, k)), heads(
        proj(layer.v_proj, v))
    scores = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(layer.head_dim)
    if mask is not None:
        scores = scores + (np.where(mask, 0.0, -1e9) if mask.dtype == bool else mask)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ vh).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return proj(layer.out_proj, out), w


def test_multi_head_attention_vs_numpy():
    mha = nn.MultiHeadAttention(8, 2, kdim=6, vdim=5, need_weights=True).to(dtype="float64")
    q, k, v = np.random.randn(2, 3, 8), np.random.randn(2, 4, 6), np.random.randn(2, 4, 5)
    bool_mask = np.random.rand(2, 1, 3, 4) > 0.3
    bool_mask[..., 0] = True
    float_mask = np.random.randn(1, 2, 3, 4)
    for mask in (None, bool_mask, float_mask):
        tmask = None if mask is None else rt.to_tensor(mask)
        out, w = mha(rt.to_tensor(q), rt.to_tensor(k), rt.to_tensor(v), attn_mask=tmask)
        want, want_w = np_mha(mha, q, k, v, mask)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-10, atol=1e-12)
    mha.need_weights = False
    check_grads(lambda q, k, v: mha(q, k, v, attn_mask=rt.to_tensor(bool_mask[:1, :, :2])),
                [q[:1, :2], k[:1], v[:1]], mha.parameters())


def test_attention_incremental_cache_matches_causal_mask():
    mha = nn.MultiHeadAttention(8, 2).to(dtype="float64")
    x = np.random.randn(2, 4, 8)
    causal = np.tril(np.ones((4, 4), bool))
    full = mha(rt.to_tensor(x), attn_mask=rt.to_tensor(causal)).numpy()
    cache = mha.gen_cache(rt.to_tensor(x))
    assert cache.k.shape == [2, 2, 0, 4]
    for t in range(4):
        step = rt.to_tensor(x[:, t:t + 1])
        out, cache = mha(step, step, step, cache=cache)
        np.testing.assert_allclose(out.numpy()[:, 0], full[:, t], rtol=1e-10)


def np_layer_norm(v, norm):
    mu, var = v.mean(-1, keepdims=True), v.var(-1, keepdims=True)
    return (v - mu) / np.sqrt(var + 1e-5) * norm.weight.numpy() + norm.bias.numpy()


def np_ffn(layer, v, act):
    hid = act(v @ layer.linear1.weight.numpy() + layer.linear1.bias.numpy())
    return hid @ layer.linear2.weight.numpy() + layer.linear2.bias.numpy()


@pytest.mark.parametrize("normalize_before", [False, True])
def test_transformer_encoder_layer_vs_numpy(normalize_before):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                       normalize_before=normalize_before).to(dtype="float64")
    x = np.random.randn(2, 3, 8)
    mask = np.array([[True, True, False], [True, True, True]])[:, None, None, :]

    ln = np_layer_norm

    def gelu(v):
        from math import erf
        return v * 0.5 * (1 + np.vectorize(erf)(v / np.sqrt(2)))

    def ffn(v):
        return np_ffn(layer, v, gelu)

    if normalize_before:
        h = x + np_mha(layer.self_attn, *[ln(x, layer.norm1)] * 3, mask)[0]
        want = h + ffn(ln(h, layer.norm2))
    else:
        h = ln(x + np_mha(layer.self_attn, x, x, x, mask)[0], layer.norm1)
        want = ln(h + ffn(h), layer.norm2)
    got = layer(rt.to_tensor(x), src_mask=rt.to_tensor(mask)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def test_transformer_encoder_stacks_fresh_layers():
    first = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(first, 3, norm=nn.LayerNorm(8))
    assert enc.layers[0] is first
    names = {p.name for p in enc.parameters()}
    assert len(names) == len(enc.parameters()) == 3 * len(first.parameters()) + 2
    assert not np.allclose(enc.layers[1].linear1.weight.numpy(), first.linear1.weight.numpy())
    enc.eval()
    x = randn(2, 5, 8)
    out = enc(x)
    assert out.shape == [2, 5, 8]
    np.testing.assert_allclose(out.numpy().mean(-1), 0, atol=1e-5)  # final LayerNorm


@pytest.mark.parametrize("normalize_before", [False, True])
def test_transformer_encoder_incremental_cache_matches_causal_mask(normalize_before):
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, normalize_before=normalize_before), 2).to(dtype="float64")
    x = np.random.randn(2, 4, 8)
    causal = rt.to_tensor(np.tril(np.ones((4, 4), bool)))
    full = enc(rt.to_tensor(x), src_mask=causal).numpy()
    cache = enc.gen_cache(rt.to_tensor(x))
    for t in range(4):
        out, cache = enc(rt.to_tensor(x[:, t:t + 1]), cache=cache)
        np.testing.assert_allclose(out.numpy()[:, 0], full[:, t], rtol=1e-9, atol=1e-10)
    assert [c.k.shape for c in cache] == [[2, 2, 4, 4]] * 2


def test_transformer_decoder_layer_vs_numpy():
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0).to(dtype="float64")
    tgt, memory = np.random.randn(2, 3, 8), np.random.randn(2, 4, 8)
    causal = np.tril(np.ones((3, 3), bool))
    mem_mask = np.array([[True] * 4, [True, True, False, False]])[:, None, None, :]
    h = np_layer_norm(tgt + np_mha(layer.self_attn, tgt, tgt, tgt, causal)[0], layer.norm1)
    h = np_layer_norm(h + np_mha(layer.cross_attn, h, memory, memory, mem_mask)[0],
                      layer.norm2)
    want = np_layer_norm(h + np_ffn(layer, h, lambda v: np.maximum(v, 0)), layer.norm3)
    got = layer(rt.to_tensor(tgt), rt.to_tensor(memory), tgt_mask=rt.to_tensor(causal),
                memory_mask=rt.to_tensor(mem_mask))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-10)


def test_transformer_decoder_incremental_cache_matches_full():
    model = nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, normalize_before=True)
    model.to(dtype="float64").eval()
    src, tgt = rt.to_tensor(np.random.randn(2, 4, 8)), np.random.randn(2, 3, 8)
    mask = model.generate_square_subsequent_mask(3)
    assert mask.numpy()[0].tolist() == [0.0, -np.inf, -np.inf]
    full = model(src, rt.to_tensor(tgt), tgt_mask=mask).numpy()
    memory = model.encoder(src)
    cache = model.decoder.gen_cache(memory)
    for t in range(3):
        out, cache = model.decoder(rt.to_tensor(tgt[:, t:t + 1]), memory, cache=cache)
        np.testing.assert_allclose(out.numpy()[:, 0], full[:, t], rtol=1e-9, atol=1e-10)
