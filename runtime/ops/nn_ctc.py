"""Connectionist temporal classification: the negative log-likelihood of a label sequence
summed over every frame-level alignment that collapses to it (Graves et al., 2006).

`ctc_loss(logp, labels, input_lengths, label_lengths)` takes normalised log-probabilities
`logp` [T, N, C] and padded labels [N, L] and returns one loss per sequence [N]. The labels
are extended with blanks, l' = (blank, l1, blank, l2, ..., blank) of length S = 2L + 1, and

    alpha[t, s] = logp[t, l'_s] + logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2])

(the s-2 term only where l'_s is not blank and differs from l'_{s-2}), all in log space so that
long sequences do not underflow. The loss is -logsumexp(alpha[T-1, S-1], alpha[T-1, S-2]).
The gradient uses the backward variables beta in the same recursion run from the end:

    d loss / d logp[t, k] = -sum over s with l'_s = k of exp(alpha[t, s] + beta[t, s]
                                                             - logp[t, k] + loss)

Frames past a sequence's input length get no gradient. A label that no alignment of the
frames can produce (too few frames) has an infinite loss and a zero gradient. The gradient op
has no gradient rule of its own: a second derivative raises.

Paddle's `F.ctc_loss` (warp-ctc) normalises its input with a softmax first;
`runtime.nn.functional.ctc_loss` does that with `log_softmax` before this op.
"""
from __future__ import annotations

from . import infer as I
from .nn import check_float
from .registry import Meta, OpError, OpTypeError, bind, register

NEG_INF = float("-inf")


def _logaddexp(xp, *terms):
    """log(sum(exp(terms))) elementwise, -inf where every term is -inf (no nan)."""
    top = terms[0]
    for t in terms[1:]:
        top = xp.maximum(top, t)
    safe = xp.where(xp.isneginf(top), 0.0, top)
    total = sum(xp.exp(t - safe) for t in terms)
    with_logs = xp.log(xp.where(total > 0, total, 1.0)) + safe
    return xp.where(total > 0, with_logs, NEG_INF)


def _shifted(xp, a, k):
    """a[:, s - k] along the last axis, -inf where s - k < 0."""
    pad = xp.full(a.shape[:-1] + (k,), NEG_INF, dtype=a.dtype)
    return xp.concatenate([pad, a[..., :-k]], axis=-1)


def _unshifted(xp, a, k):
    """a[:, s + k] along the last axis, -inf where s + k >= S."""
    pad = xp.full(a.shape[:-1] + (k,), NEG_INF, dtype=a.dtype)
    return xp.concatenate([a[..., k:], pad], axis=-1)


class _Lattice:
    """The extended labels of a batch and what each position may be reached from."""

    def __init__(self, xp, logp, labels, input_lengths, label_lengths, blank):
        t_max, n, c = logp.shape
        for arg, values in (("labels", labels), ("input_lengths", input_lengths),
                            ("label_lengths", label_lengths)):
            if values.dtype.kind not in "iu":
                raise _not_integer(arg, values.dtype.name)
        if not 0 <= blank < c:
            raise OpError(f"ctc_loss: blank={blank} is out of range for {c} classes")
        lab_len = label_lengths.astype("int64")
        in_len = input_lengths.astype("int64")
        if (lab_len < 0).any() or (lab_len > labels.shape[1]).any():
            raise OpError(f"ctc_loss: label_lengths {lab_len.tolist()} must lie in "
                          f"[0, {labels.shape[1]}] (labels has shape {list(labels.shape)})")
        if (in_len < 1).any() or (in_len > t_max).any():
            raise OpError(f"ctc_loss: input_lengths {in_len.tolist()} must lie in "
                          f"[1, {t_max}] (log_probs has {t_max} frames)")
        s_max = 2 * labels.shape[1] + 1
        ext = xp.full((n, s_max), blank, dtype="int64")
        ext[:, 1::2] = labels
        pos = xp.arange(s_max)
        self.valid = pos[None, :] < (2 * lab_len + 1)[:, None]  # [N, S]
        used = ext[:, 1::2][self.valid[:, 1::2]]
        if ((used < 0) | (used >= c) | (used == blank)).any():
            raise OpError(f"ctc_loss: labels must lie in [0, {c}) and differ from blank="
                          f"{blank} within label_lengths")
        ext = xp.where(self.valid, ext, blank)
        self.ext, self.in_len, self.lab_len = ext, in_len, lab_len
        prev2 = xp.concatenate([xp.full((n, 2), -1, dtype="int64"), ext[:, :-2]], axis=1)
        self.skip = (ext != blank) & (ext != prev2) & (pos[None, :] >= 2)  # s-2 -> s allowed
        self.emit = xp.take_along_axis(logp, xp.broadcast_to(ext[None], (t_max, n, s_max)),
                                       axis=2)  # [T, N, S]: logp[t, n, l'_s]
        self.emit = xp.where(self.valid[None], self.emit, NEG_INF)

    def forward(self, xp):
        emit, skip = self.emit, self.skip
        alpha = xp.full(emit.shape, NEG_INF, dtype=emit.dtype)
        alpha[0, :, :2] = emit[0, :, :2]
        for t in range(1, emit.shape[0]):
            a = alpha[t - 1]
            two_back = xp.where(skip, _shifted(xp, a, 2), NEG_INF)
            alpha[t] = _logaddexp(xp, a, _shifted(xp, a, 1), two_back) + emit[t]
        return alpha

    def backward(self, xp):
        emit, skip = self.emit, self.skip
        beta = xp.full(emit.shape, NEG_INF, dtype=emit.dtype)
        last = self.in_len - 1
        ends = self._ends(xp)
        for t in range(emit.shape[0] - 1, -1, -1):
            start = xp.where(ends, emit[t], NEG_INF)
            if t + 1 < emit.shape[0]:
                b = beta[t + 1]
                two_ahead = xp.where(_unshifted(xp, skip, 2), _unshifted(xp, b, 2), NEG_INF)
                inner = _logaddexp(xp, b, _unshifted(xp, b, 1), two_ahead) + emit[t]
            else:
                inner = start
            beta[t] = xp.where((t == last)[:, None], start,
                               xp.where((t < last)[:, None], inner, NEG_INF))
        return beta

    def _ends(self, xp):
        """[N, S]: the two positions an alignment may end on (S-1 and S-2 of each sequence)."""
        final = 2 * self.lab_len
        pos = xp.arange(self.ext.shape[1])[None, :]
        return (pos == final[:, None]) | (pos == final[:, None] - 1)

    def log_likelihood(self, xp, alpha):
        n = alpha.shape[1]
        at_end = alpha[self.in_len - 1, xp.arange(n)]  # [N, S]
        return _logaddexp(xp, *[xp.where(self._ends(xp), at_end, NEG_INF)[:, s]
                                for s in range(at_end.shape[1])])


def _ctc_kernel(xp, logp, labels, input_lengths, label_lengths, blank=0, norm_by_times=False):
    lattice = _Lattice(xp, logp, labels, input_lengths, label_lengths, blank)
    return (-lattice.log_likelihood(xp, lattice.forward(xp))).astype(logp.dtype, copy=False)


def _ctc_grad_kernel(xp, g, logp, labels, input_lengths, label_lengths, blank=0,
                     norm_by_times=False):
    lattice = _Lattice(xp, logp, labels, input_lengths, label_lengths, blank)
    alpha, beta = lattice.forward(xp), lattice.backward(xp)
    loglik = lattice.log_likelihood(xp, alpha)
    possible = ~xp.isneginf(loglik)
    emit = xp.where(xp.isneginf(lattice.emit), 0.0, lattice.emit)  # alpha + beta is -inf there
    gamma = alpha + beta - emit - xp.where(possible, loglik, 0.0)[None, :, None]
    frames = xp.arange(logp.shape[0])[:, None] < lattice.in_len[None, :]  # [T, N]
    occupancy = xp.where(frames[:, :, None] & possible[None, :, None], xp.exp(gamma), 0.0)
    onehot = (lattice.ext[:, :, None] == xp.arange(logp.shape[2])).astype(logp.dtype)
    grad = -xp.einsum("tns,nsc->tnc", occupancy, onehot)
    scale = g.reshape(1, -1, 1)
    if norm_by_times:
        scale = scale / lattice.in_len.reshape(1, -1, 1)
    return (grad * scale).astype(logp.dtype, copy=False)


def _not_integer(arg: str, dtype: str) -> OpTypeError:
    return OpTypeError(f"ctc_loss: {arg} has dtype {dtype}; it must be int32 or int64")


def _check_lengths(arg, meta, n):
    I.check_tensor("ctc_loss", arg, meta)
    if not meta.dtype.is_integer:
        raise _not_integer(arg, meta.dtype.name)
    if len(meta.shape) != 1 or -1 not in (n, meta.shape[0]) and meta.shape[0] != n:
        raise OpError(f"ctc_loss: {arg} has shape {I.fmt(meta.shape)}; it must be [{n}] "
                      "(one length per sequence)")


def _ctc_infer(logp, labels, input_lengths, label_lengths, blank=0, norm_by_times=False):
    check_float("ctc_loss", "log_probs", logp)
    if len(logp.shape) != 3:
        raise OpError(f"ctc_loss: log_probs has shape {I.fmt(logp.shape)}; it must be 3-D "
                      "[max_logit_length, batch_size, num_classes + 1]")
    n = logp.shape[1]
    I.check_tensor("ctc_loss", "labels", labels)
    if not labels.dtype.is_integer:
        raise _not_integer("labels", labels.dtype.name)
    if len(labels.shape) != 2 or -1 not in (n, labels.shape[0]) and labels.shape[0] != n:
        raise OpError(f"ctc_loss: labels has shape {I.fmt(labels.shape)} but log_probs has "
                      f"shape {I.fmt(logp.shape)}; labels must be [{n}, max_label_length]")
    _check_lengths("input_lengths", input_lengths, n)
    _check_lengths("label_lengths", label_lengths, n)
    return Meta((n,), logp.dtype)


def _ctc_grad(ins, outs, gs, a):
    logp, labels, input_lengths, label_lengths = ins
    return [bind(CTC_LOSS_GRAD, (gs[0], logp, labels, input_lengths, label_lengths), a),
            None, None, None]


# amp 'promote', as Paddle's lists leave warpctc: F.ctc_loss feeds it log_softmax's float32
CTC_LOSS = register("ctc_loss", kernel=_ctc_kernel, infer=_ctc_infer, grad=_ctc_grad,
                    amp="promote", doc="CTC negative log-likelihood per sequence (see module).")
CTC_LOSS_GRAD = register(
    "ctc_loss_grad", kernel=_ctc_grad_kernel,
    infer=lambda g, logp, *_, **a: Meta(logp.shape, logp.dtype), amp="promote",
    doc="Gradient of ctc_loss with respect to log_probs, times g (no gradient of its own).")


def ctc_loss(log_probs, labels, input_lengths, label_lengths, blank: int = 0,
             norm_by_times: bool = False):
    """CTC loss per sequence [N] of normalised log-probabilities [T, N, C]."""
    return bind(CTC_LOSS, (log_probs, labels, input_lengths, label_lengths),
                {"blank": int(blank), "norm_by_times": bool(norm_by_times)})

