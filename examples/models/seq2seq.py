"""A sequence-to-sequence model with attention: a GRU encoder over padded sources, a GRU-cell
decoder with Luong (dot-product) attention, trained with teacher forcing and decoded greedily
or with beam search. Both decoding loops stop on a tensor condition: when every sequence (or
beam) has produced EOS, or after `max_len` steps.

>>> import runtime as rt
>>> from examples.models import Seq2Seq
>>> model = Seq2Seq(vocab_size=12)
>>> src = rt.to_tensor([[4, 5, 6], [7, 8, 0]])
>>> model(src, rt.to_tensor([3, 2]), rt.to_tensor([[1, 4, 5], [1, 7, 8]])).shape
[2, 3, 12]
>>> model.beam_search(src, rt.to_tensor([3, 2])).shape[0]
2
"""
from __future__ import annotations

import runtime as rt
from runtime import nn
from runtime.nn import functional as F

PAD, BOS, EOS = 0, 1, 2
NEG_INF = -1e9


class Seq2Seq(nn.Layer):
    """`forward(src, src_len, tgt_in)` -> logits [B, T, vocab] (teacher forcing);
    `greedy_search(src, src_len)` and `beam_search(src, src_len)` -> token ids [B, steps]
    (PAD after a sequence's EOS)."""

    def __init__(self, vocab_size: int = 16, embed_dim: int = 16, hidden_size: int = 24,
                 max_len: int = 8, beam_size: int = 3):
        super().__init__()
        self.vocab_size, self.hidden_size = vocab_size, hidden_size
        self.max_len, self.beam_size = max_len, beam_size
        self.src_embedding = nn.Embedding(vocab_size, embed_dim)
        self.tgt_embedding = nn.Embedding(vocab_size, embed_dim)
        self.encoder = nn.GRU(embed_dim, hidden_size)
        self.cell = nn.GRUCell(embed_dim + hidden_size, hidden_size)
        self.attention_out = nn.Linear(2 * hidden_size, hidden_size)
        self.classifier = nn.Linear(hidden_size, vocab_size)

    # ---- shared parts ---------------------------------------------------------------------
    def encode(self, src, src_len):
        """(encoder outputs [B, S, H], final state [B, H], additive source mask [B, S])."""
        out, h = self.encoder(self.src_embedding(src), sequence_length=src_len)
        positions = rt.arange(src.shape[1], dtype="int64")
        valid = rt.unsqueeze(positions, 0) < rt.unsqueeze(src_len, 1)
        mask = (1.0 - valid.astype("float32")) * NEG_INF
        return out, h[0], mask

    def decode_step(self, token, h, context, memory, mask):
        """One decoder step with input feeding: (logits [N, V], new h, new context)."""
        x = rt.concat([self.tgt_embedding(token), context], axis=-1)
        h, _ = self.cell(x, h)
        scores = rt.squeeze(rt.matmul(memory, rt.unsqueeze(h, -1)), -1) + mask  # [N, S]
        weights = F.softmax(scores, axis=-1)
        attended = rt.squeeze(rt.matmul(rt.unsqueeze(weights, 1), memory), 1)
        context = rt.tanh(self.attention_out(rt.concat([attended, h], axis=-1)))
        return self.classifier(context), h, context

    def initial_context(self, h):
        return rt.zeros_like(h)

    # ---- training -------------------------------------------------------------------------
    def forward(self, src, src_len, tgt_in):
        memory, h, mask = self.encode(src, src_len)
        context = self.initial_context(h)
        logits = []
        for t in range(tgt_in.shape[1]):
            step_logits, h, context = self.decode_step(tgt_in[:, t], h, context, memory, mask)
            logits.append(step_logits)
        return rt.stack(logits, axis=1)

    # ---- decoding -------------------------------------------------------------------------
    def greedy_search(self, src, src_len):
        memory, h, mask = self.encode(src, src_len)
        context = self.initial_context(h)
        token = rt.full_like(src_len, BOS)
        finished = src_len < 0  # all False, shaped [B]
        tokens = []
        step = 0
        while step < self.max_len and not rt.all(finished):
            logits, h, context = self.decode_step(token, h, context, memory, mask)
            token = rt.where(finished, rt.full_like(token, PAD), rt.argmax(logits, axis=-1))
            tokens.append(token)
            finished = finished | (token == EOS)
            step += 1
        return rt.stack(tokens, axis=1)

    def beam_search(self, src, src_len):
        """Beam search with `beam_size` beams per source; the highest-scoring beam (sum of
        log-probabilities) is returned. A finished beam only continues with PAD at no cost."""
        k, vocab = self.beam_size, self.vocab_size
        memory, h, mask = self.encode(src, src_len)
        # Each source is repeated k times: row b * k + j is beam j of source b.
        memory = rt.reshape(rt.tile(rt.unsqueeze(memory, 1), [1, k, 1, 1]),
                            [-1, memory.shape[1], self.hidden_size])
        mask = rt.reshape(rt.tile(rt.unsqueeze(mask, 1), [1, k, 1]), [-1, mask.shape[1]])
        h = rt.reshape(rt.tile(rt.unsqueeze(h, 1), [1, k, 1]), [-1, self.hidden_size])
        context = self.initial_context(h)
        rows = rt.reshape(rt.tile(rt.unsqueeze(src_len, 1), [1, k]), [-1])  # [B * k]
        token = rt.full_like(rows, BOS)
        finished = rows < 0
        # Only beam 0 is live at the start, so the first step does not pick k copies.
        first = (rt.arange(k, dtype="float32") > 0).astype("float32") * NEG_INF
        scores = rt.reshape(rt.zeros_like(rt.unsqueeze(src_len, 1)).astype("float32") + first,
                            [-1])
        source = rt.cumsum(rt.ones_like(src_len), axis=0) - 1  # [B]: 0 .. B-1
        pad_only = (rt.arange(vocab, dtype="int64") != PAD).astype("float32") * NEG_INF
        history = rt.zeros_like(rt.unsqueeze(rows, 1) + rt.arange(self.max_len, dtype="int64"))
        columns = rt.arange(self.max_len, dtype="int64")
        step = 0
        while step < self.max_len and not rt.all(finished):
            logits, h, context = self.decode_step(token, h, context, memory, mask)
            log_probs = F.log_softmax(logits, axis=-1)
            log_probs = rt.where(rt.unsqueeze(finished, 1), rt.zeros_like(log_probs) + pad_only,
                                 log_probs)
            total = rt.reshape(rt.unsqueeze(scores, 1) + log_probs, [-1, k * vocab])
            top_scores, top = rt.topk(total, k, axis=-1)  # [B, k]
            parent = rt.reshape(rt.unsqueeze(source, 1) * k + top // vocab, [-1])
            token = rt.reshape(top % vocab, [-1])
            h = rt.gather(h, parent)
            context = rt.gather(context, parent)
            history = rt.where(columns == step, rt.unsqueeze(token, 1),
                               rt.gather(history, parent))
            finished = rt.gather(finished, parent) | (token == EOS)
            scores = rt.reshape(top_scores, [-1])
            step += 1
        best = rt.argmax(rt.reshape(scores, [-1, k]), axis=-1) + source * k
        return rt.gather(history, best)[:, :step]
