"""Sequence generation families: seq2seq with attention and a Transformer, each trained with
teacher forcing (harness.py) and decoded by beam search built as Paddle's examples build it:
per step `topk` over beam x vocabulary, token and parent beam written to tensor arrays
(`rt.tensor.array_write` with an int64 [1] step counter advanced by `rt.increment`), and the
sequences recovered with `F.gather_tree`. The beam search is checked eagerly, converted and
reloaded at another batch size, and each returned sequence's score is recomputed by teacher
forcing (which checks the parent bookkeeping and gather_tree)."""
import copy

import numpy as np

import d2s
import runtime as rt
import runtime.nn as nn
import runtime.nn.functional as F

from .harness import check_family

SRC_VOCAB, TGT_VOCAB, SRC_LEN, TGT_LEN, BOS, EOS = 12, 9, 5, 4, 1, 2
BEAM, MAX_STEPS = 3, 4


def pair_batch(rng, n):
    src = rng.integers(3, SRC_VOCAB, (n, SRC_LEN)).astype("int64")
    src_len = rng.integers(2, SRC_LEN + 1, n).astype("int64")
    tgt = rng.integers(3, TGT_VOCAB, (n, TGT_LEN + 1)).astype("int64")
    tgt[:, 0] = BOS
    return src, src_len, tgt[:, :-1], tgt[:, 1:]


def nll_loss(logits, label):
    smoothed = F.label_smooth(F.one_hot(label, TGT_VOCAB), epsilon=0.1)
    return rt.mean(F.cross_entropy(logits, smoothed, soft_label=True))


# ---- seq2seq with (Luong) attention ---------------------------------------------------------

class AttentionSeq2Seq(nn.Layer):
    def __init__(self, hid=8):
        super().__init__()
        self.src_emb = nn.Embedding(SRC_VOCAB, hid)
        self.tgt_emb = nn.Embedding(TGT_VOCAB, hid)
        self.encoder = nn.GRU(hid, hid)
        self.cell = nn.GRUCell(2 * hid, hid)
        self.attn = nn.Linear(hid, hid, bias_attr=False)
        self.out = nn.Linear(2 * hid, TGT_VOCAB)

    def encode(self, src, src_len):
        enc, h = self.encoder(self.src_emb(src), sequence_length=src_len)
        bias = (1.0 - F.sequence_mask(src_len, maxlen=SRC_LEN, dtype="float32")) * -1e9
        return enc, h[0], bias

    def step(self, token, h, enc, bias):
        """One decoder step: log-probabilities of the next token and the new state."""
        score = rt.matmul(self.attn(h).unsqueeze(1), enc, transpose_y=True) + bias.unsqueeze(1)
        ctx = rt.matmul(F.softmax(score), enc).squeeze(1)
        h, _ = self.cell(rt.concat([self.tgt_emb(token), ctx], axis=-1), h)
        return F.log_softmax(self.out(rt.concat([h, ctx], axis=-1))), h

    def forward(self, src, src_len, tgt_in):
        enc, h, bias = self.encode(src, src_len)
        steps = []
        for t in range(TGT_LEN):  # teacher forcing
            logp, h = self.step(tgt_in[:, t], h, enc, bias)
            steps.append(logp)
        return rt.stack(steps, axis=1)


def beam_search(step, state, batch, beam=BEAM, max_steps=MAX_STEPS):
    """Paddle-style beam search over `step(tokens [B*K], state, t) -> (logp [B*K, V], state)`
    where every tensor in `state` has B*K rows. Returns (ids [B, K, T], scores [B, K])."""
    vocab = TGT_VOCAB
    token = rt.full([batch * beam], BOS, "int64")
    scores = rt.tile(rt.to_tensor([[0.0] + [-1e9] * (beam - 1)]), [batch, 1])  # [B, K]
    finished = rt.zeros([batch, beam], "bool")
    ids_arr = rt.tensor.create_array("int64")
    parents_arr = rt.tensor.create_array("int64")
    i = rt.zeros([1], "int64")
    offsets = rt.arange(batch, dtype="int64").unsqueeze(1) * beam  # [B, 1]
    for t in range(max_steps):
        logp, state = step(token, state, t)
        logp = rt.reshape(logp, [batch, beam, vocab])
        # a finished beam only extends with EOS, at no cost
        eos_only = rt.to_tensor([[[0.0 if v == EOS else -1e9 for v in range(vocab)]]])
        logp = rt.where(finished.unsqueeze(-1), eos_only, logp)
        total = rt.reshape(scores.unsqueeze(-1) + logp, [batch, beam * vocab])
        scores, index = rt.topk(total, beam)
        parent = index // vocab
        token2d = index % vocab
        rt.tensor.array_write(token2d, i, ids_arr)
        rt.tensor.array_write(parent, i, parents_arr)
        i = rt.increment(i)
        rows = rt.reshape(parent + offsets, [-1])
        state = [rt.gather(s, rows) for s in state]
        finished = rt.logical_or(rt.take_along_axis(finished, parent, 1), token2d == EOS)
        token = rt.reshape(token2d, [-1])
    ids = rt.stack([rt.tensor.array_read(ids_arr, k) for k in range(max_steps)])
    parents = rt.stack([rt.tensor.array_read(parents_arr, k) for k in range(max_steps)])
    seqs = F.gather_tree(ids, parents)  # [T, B, K]
    return rt.transpose(seqs, [1, 2, 0]), scores


class Seq2SeqBeam(AttentionSeq2Seq):
    def forward(self, src, src_len):
        enc, h, bias = self.encode(src, src_len)
        batch = src.shape[0]
        tile = lambda x: rt.reshape(rt.tile(x.unsqueeze(1), [1, BEAM] + [1] * (len(x.shape) - 1)),
                                    [batch * BEAM] + list(x.shape[1:]))
        enc_k, bias_k = tile(enc), tile(bias)

        def step(token, state, t):
            logp, h2 = self.step(token, state[0], enc_k, bias_k)
            return logp, [h2]

        return beam_search(step, [tile(h)], batch)


def teacher_forced_score(model, src, src_len, seq):
    """Sum of log-probabilities of `seq` [B, T] (EOS-padded), as the beam search scores it."""
    tgt_in = np.concatenate([np.full((seq.shape[0], 1), BOS), seq[:, :-1]], axis=1)
    with rt.no_grad():
        logp = model(rt.to_tensor(src), rt.to_tensor(src_len), rt.to_tensor(tgt_in)).numpy()
    picked = np.take_along_axis(logp, seq[:, :, None], axis=-1)[..., 0]
    after_eos = np.cumsum(seq == EOS, axis=1) - (seq == EOS) > 0
    return np.where(after_eos, 0.0, picked).sum(1)


def seq2seq_loss(model, src, src_len, tgt_in, tgt_out):
    return nll_loss(model(src, src_len, tgt_in), tgt_out)


def check_beam_search(tmp_path, trained, beam_cls):
    beam = beam_cls()
    beam.set_state_dict(trained.state_dict())
    beam.eval()
    static = d2s.to_static(copy.deepcopy(beam))
    rng = np.random.default_rng(5)
    src, src_len, _, _ = pair_batch(rng, 2)
    with rt.no_grad():
        ids, scores = beam(rt.to_tensor(src), rt.to_tensor(src_len))
        s_ids, s_scores = static(rt.to_tensor(src), rt.to_tensor(src_len))
    np.testing.assert_array_equal(s_ids.numpy(), ids.numpy())
    np.testing.assert_allclose(s_scores.numpy(), scores.numpy(), rtol=1e-5, atol=1e-5)
    assert ids.shape == [2, BEAM, MAX_STEPS]
    assert (np.diff(scores.numpy(), axis=1) <= 1e-6).all()  # beams come best first
    for k in range(BEAM):
        np.testing.assert_allclose(teacher_forced_score(trained, src, src_len, ids.numpy()[:, k]),
                                   scores.numpy()[:, k], rtol=1e-4, atol=1e-4)
    d2s.save(static, str(tmp_path / "beam"))
    loaded = d2s.load(str(tmp_path / "beam"))
    src3, len3, _, _ = pair_batch(np.random.default_rng(6), 3)
    with rt.no_grad():
        want = beam(rt.to_tensor(src3), rt.to_tensor(len3))
    got = loaded(rt.to_tensor(src3), rt.to_tensor(len3))
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), rtol=1e-5, atol=1e-5)


def test_seq2seq_attention_teacher_forcing_and_beam_search(tmp_path):
    check_family(tmp_path, AttentionSeq2Seq, pair_batch, seq2seq_loss, 3)
    rt.seed(0)
    trained = AttentionSeq2Seq()
    check_beam_search(tmp_path, trained, Seq2SeqBeam)


# ---- Transformer ----------------------------------------------------------------------------

D_MODEL = 8


class TinyTransformer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(SRC_VOCAB, D_MODEL)
        self.tgt_emb = nn.Embedding(TGT_VOCAB, D_MODEL)
        self.pos = nn.Embedding(16, D_MODEL)
        self.model = nn.Transformer(D_MODEL, nhead=2, num_encoder_layers=1,
                                    num_decoder_layers=1, dim_feedforward=16, dropout=0.0)
        self.out = nn.Linear(D_MODEL, TGT_VOCAB)

    def embed(self, emb, ids):
        positions = rt.arange(ids.shape[1], dtype="int64").unsqueeze(0)
        return emb(ids) * D_MODEL ** 0.5 + self.pos(positions)

    def encode(self, src, src_len):
        pad = F.sequence_mask(src_len, maxlen=SRC_LEN, dtype="float32")
        bias = ((1.0 - pad) * -1e9).unsqueeze(1).unsqueeze(1)  # [B, 1, 1, S]
        return self.model.encoder(self.embed(self.src_emb, src), src_mask=bias), bias

    def decode(self, tgt_in, memory, bias):
        causal = self.model.generate_square_subsequent_mask(tgt_in.shape[1])
        h = self.model.decoder(self.embed(self.tgt_emb, tgt_in), memory, tgt_mask=causal,
                               memory_mask=bias)
        return F.log_softmax(self.out(h))

    def forward(self, src, src_len, tgt_in):
        memory, bias = self.encode(src, src_len)
        return self.decode(tgt_in, memory, bias)


class TransformerBeam(TinyTransformer):
    def forward(self, src, src_len):
        memory, bias = self.encode(src, src_len)
        batch = src.shape[0]
        tile = lambda x: rt.reshape(rt.tile(x.unsqueeze(1), [1, BEAM] + [1] * (len(x.shape) - 1)),
                                    [batch * BEAM] + list(x.shape[1:]))
        memory_k, bias_k = tile(memory), tile(bias)

        def step(token, state, t):
            prefix = rt.concat([state[0], token.unsqueeze(1)], axis=1) if t else \
                token.unsqueeze(1)
            logp = self.decode(prefix, memory_k, bias_k)[:, -1]
            return logp, [prefix]

        start = rt.zeros([batch * BEAM, 0], "int64")
        return beam_search(step, [start], batch)


def test_transformer_training_and_beam_search(tmp_path):
    check_family(tmp_path, TinyTransformer, pair_batch, seq2seq_loss, 3, lr=0.005,
                 skip_params=("k_proj.bias",))
    rt.seed(0)
    trained = TinyTransformer()
    trained.eval()
    check_beam_search(tmp_path, trained, TransformerBeam)
