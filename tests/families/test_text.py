"""Text families: sentiment CNN and BiLSTM, SimNet (bag-of-words pairwise ranking with
softsign and cosine similarity), word2vec (skip-gram with negative sampling) and LAC (BiGRU
encoder + linear-chain CRF loss and Viterbi decoding), written as Paddle users write them,
small sizes. See harness.py for what is checked."""
import numpy as np

import runtime as rt
import runtime.nn as nn
import runtime.nn.functional as F

from .harness import check_family

VOCAB, SEQ, CLASSES = 30, 7, 2


def token_batch(rng, n):
    ids = rng.integers(1, VOCAB, (n, SEQ)).astype("int64")
    lengths = rng.integers(2, SEQ + 1, n).astype("int64")
    ids[np.arange(SEQ)[None, :] >= lengths[:, None]] = 0  # padding id 0
    return ids, lengths, rng.integers(0, CLASSES, (n, 1)).astype("int64")


class SentimentCNN(nn.Layer):
    """Embedding -> Conv2D over (time, emb) windows -> max over time -> FC (Paddle's CNN)."""

    def __init__(self, emb=8, hid=6, win=3):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, emb, padding_idx=0)
        self.conv = nn.Conv2D(1, hid, (win, emb), padding=(1, 0))
        self.fc = nn.Linear(hid, CLASSES)

    def forward(self, ids, lengths):
        mask = F.sequence_mask(lengths, maxlen=SEQ, dtype="float32").unsqueeze(-1)
        emb = self.embedding(ids) * mask
        h = F.relu(self.conv(emb.unsqueeze(1))).squeeze(-1)  # [N, hid, T]
        h = rt.max(h, axis=-1)
        return F.softmax(self.fc(F.softsign(h)))


class SentimentBiLSTM(nn.Layer):
    def __init__(self, emb=8, hid=6):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hid, direction="bidirect")
        self.fc = nn.Linear(2 * hid, CLASSES)

    def forward(self, ids, lengths):
        out, _ = self.lstm(self.embedding(ids), sequence_length=lengths)
        mask = F.sequence_mask(lengths, maxlen=SEQ, dtype=out.dtype).unsqueeze(-1)
        pooled = rt.sum(out * mask, axis=1) / rt.cast(lengths, "float32").unsqueeze(-1)
        return F.softmax(self.fc(F.tanh(pooled)))


def sentiment_loss(model, ids, lengths, label):
    prob = model(ids, lengths)
    return rt.mean(F.cross_entropy(prob, label, use_softmax=False, reduction="none"))


def test_sentiment_cnn(tmp_path):
    check_family(tmp_path, SentimentCNN, token_batch, sentiment_loss, 2)


def test_sentiment_bilstm(tmp_path):
    check_family(tmp_path, SentimentBiLSTM, token_batch, sentiment_loss, 2)


# ---- SimNet: query / positive title / negative title, hinge loss on cosine similarities ----

class BOWEncoder(nn.Layer):
    def __init__(self, emb=8, hid=6):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, emb, padding_idx=0)
        self.fc = nn.Linear(emb, hid)

    def forward(self, ids):
        bow = F.softsign(rt.sum(self.emb(ids), axis=1))
        return self.fc(bow)


class SimNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.query, self.title = BOWEncoder(), BOWEncoder()

    def forward(self, q, pos, neg):
        qv = self.query(q)
        return (F.cosine_similarity(qv, self.title(pos), axis=1),
                F.cosine_similarity(qv, self.title(neg), axis=1))


def simnet_batch(rng, n):
    return tuple(rng.integers(1, VOCAB, (n, SEQ)).astype("int64") for _ in range(3))


def simnet_loss(model, q, pos, neg, margin=0.1):
    s_pos, s_neg = model(q, pos, neg)
    return rt.mean(F.relu(margin - s_pos + s_neg))


def test_simnet(tmp_path):
    check_family(tmp_path, SimNet, simnet_batch, simnet_loss, 3)


# ---- word2vec: skip-gram with negative sampling ---------------------------------------------

class SkipGram(nn.Layer):
    def __init__(self, emb=8):
        super().__init__()
        init = nn.initializer.Uniform(-0.5 / emb, 0.5 / emb)
        self.center = nn.Embedding(VOCAB, emb, weight_attr=rt.ParamAttr(initializer=init))
        self.context = nn.Embedding(VOCAB, emb, weight_attr=rt.ParamAttr(initializer=init))

    def forward(self, center, context):
        c = self.center(center)  # [N, 1, E]
        w = self.context(context)  # [N, 1 + K, E]
        return rt.matmul(c, w, transpose_y=True).squeeze(1)  # [N, 1 + K] logits


def w2v_batch(rng, n, negatives=3):
    label = np.zeros((n, 1 + negatives), "float32")
    label[:, 0] = 1.0
    return (rng.integers(0, VOCAB, (n, 1)).astype("int64"),
            rng.integers(0, VOCAB, (n, 1 + negatives)).astype("int64"), label)


def w2v_loss(model, center, context, label):
    return F.binary_cross_entropy_with_logits(model(center, context), label)


def test_word2vec(tmp_path):
    check_family(tmp_path, SkipGram, w2v_batch, w2v_loss, 2, opt_cls=rt.optimizer.Adagrad,
                 lr=0.5)


# ---- LAC: BiGRU encoder, CRF loss, Viterbi decoding -----------------------------------------

TAGS = 4


class LexNet(nn.Layer):
    def __init__(self, emb=8, hid=6):
        super().__init__()
        self.word_embedding = nn.Embedding(VOCAB, emb)
        self.gru = nn.GRU(emb, hid, direction="bidirect")
        self.fc = nn.Linear(2 * hid, TAGS)
        self.transition = self.create_parameter([TAGS + 2, TAGS])

    def emissions(self, word, length):
        out, _ = self.gru(self.word_embedding(word), sequence_length=length)
        return self.fc(out)

    def forward(self, word, length):
        emission = self.emissions(word, length)
        return emission, F.crf_decoding(emission, self.transition, length=length)


def lac_batch(rng, n):
    word, length, _ = token_batch(rng, n)
    tags = rng.integers(0, TAGS, (n, SEQ)).astype("int64")
    return word, length, tags


def lac_loss(model, word, length, tags):
    emission, path = model(word, length)
    cost = F.linear_chain_crf(emission, tags, model.transition, length=length)
    assert path.shape == [word.shape[0], SEQ] and path.dtype == rt.int64
    return rt.mean(cost)


def _viterbi(em, trans, n):
    best, best_path = -np.inf, None
    for path in np.ndindex(*(TAGS,) * n):
        s = trans[0, path[0]] + trans[1, path[-1]] + sum(em[t, p] for t, p in enumerate(path))
        s += sum(trans[2 + a, b] for a, b in zip(path, path[1:]))
        if s > best:
            best, best_path = s, path
    return best_path


def test_lac_encoder_crf(tmp_path):
    check_family(tmp_path, LexNet, lac_batch, lac_loss, 2)


def test_lac_decoding_is_the_best_path():
    rt.seed(2)
    net = LexNet()
    net.eval()
    word, length, _ = lac_batch(np.random.default_rng(3), 2)
    length[:] = [4, 3]
    em, path = (t.numpy() for t in net(rt.to_tensor(word), rt.to_tensor(length)))
    for b in range(2):
        n = length[b]
        assert tuple(path[b, :n]) == _viterbi(em[b], net.transition.numpy(), n)
        assert (path[b, n:] == 0).all()
