"""A whole GRU layer direction as one op, as `nn_rnn.lstm_sequence` is for the LSTM.

`gru_sequence(xw, h0, w_hh, b_hh, lengths)` runs, for t = 0..T-1 (T-1..0 with `reverse=True`;
`xw` is `[T, B, 3H]`, the inputs already projected: `x W_ih^T + b_ih`), Paddle's (cuDNN's)
GRU, whose reset gate scales the hidden projection with its bias:

    hp = h W_hh^T + b_hh;  r = sigmoid(xw_r + hp_r);  z = sigmoid(xw_z + hp_z)
    c = tanh(xw_c + r * hp_c);  h = z * h + (1 - z) * c

Row b's steps at `t >= lengths[b]` (when `lengths` is given) keep its state and output zeros,
as `nn.RNN` does with `sequence_length`. Returns (the h of every step `[T, B, H]`, the last
state `[B, H]`, the saved gates `[T, B, 4H]`: r, z, c and hp_c, the state each step started
from `[T, B, H]`); the last two are what the gradient reads (not differentiable outputs).
`gru_sequence_grad` runs the recurrence backwards in one kernel; the gradients of `W_hh` and
`b_hh` are one GEMM and one sum over all steps after the loop.

Why one op: as for the LSTM (`nn_rnn`'s docstring), a step unrolled as ops is about 12 ops
forward and 25 backward on small arrays, each a Python dispatch; the zoo's speech model runs
its GRU over 10 steps. The C recurrence is `runtime/program/gru_native.py`.
"""
from __future__ import annotations

from . import infer as I
from .combine import concat, split, stack, unstack
from .linalg import matmul
from .math import tanh
from .nn import check_float, sigmoid
from .nn_rnn import NATIVE_KERNELS, refuse_second_derivative, sigmoid_into, step_order
from .reduce import sum as reduce_sum
from .registry import STATE, Meta, OpError, bind, register
from .shape import reshape, unsqueeze


def _valid(xp, lengths, steps: int, dtype):
    """[T, B, 1]: 1 where step t of row b is before the row's length, else 0; None without
    lengths (every step counts)."""
    if lengths is None:
        return None
    return (xp.arange(steps)[:, None] < lengths[None, :]).astype(dtype)[..., None]


def _gru_kernel(xp, xw, h0, w_hh, b_hh, lengths, reverse=False):
    native = NATIVE_KERNELS.get("gru_forward")
    done = native(xp, xw, h0, w_hh, b_hh, lengths, reverse) if native is not None else None
    if done is not None:
        return done
    steps, hidden = xw.shape[0], h0.shape[-1]
    out = xp.zeros(xw.shape[:2] + (hidden,), xw.dtype)
    prevs = xp.empty_like(out)
    saved = xp.empty(xw.shape[:2] + (4 * hidden,), xw.dtype)
    valid = _valid(xp, lengths, steps, xw.dtype)
    w_t = w_hh.T
    h = h0
    for t in step_order(steps, reverse):
        prevs[t] = h
        hp = h @ w_t
        if b_hh is not None:
            hp += b_hh
        s = saved[t]
        sigmoid_into(xp, xw[t, :, :2 * hidden] + hp[:, :2 * hidden], s[:, :2 * hidden])
        s[:, 3 * hidden:] = hp[:, 2 * hidden:]
        c = s[:, 2 * hidden:3 * hidden]
        xp.tanh(xw[t, :, 2 * hidden:] + s[:, :hidden] * s[:, 3 * hidden:], out=c)
        new = (h - c) * s[:, hidden:2 * hidden] + c
        if valid is None:
            out[t] = new
            h = out[t]
        else:
            out[t] = new * valid[t]
            h = new * valid[t] + h * (1 - valid[t])
    return out, h.copy(), saved, prevs


def _check(xw, h0, w_hh, b_hh, lengths):
    for name, x in (("xw", xw), ("h0", h0), ("w_hh", w_hh)) + (
            (("b_hh", b_hh),) if b_hh is not None else ()):
        check_float("gru_sequence", name, x)
    if lengths is not None and (lengths.dtype.kind not in "iu" or len(lengths.shape) != 1):
        raise OpError(f"gru_sequence: lengths must be an integer tensor [B]; got "
                      f"{lengths.dtype.name} {I.fmt(lengths.shape)}")
    if len(xw.shape) != 3 or len(h0.shape) != 2 or len(w_hh.shape) != 2:
        raise OpError(f"gru_sequence: expected xw [T, B, 3H], h0 [B, H], w_hh [3H, H]; got "
                      f"{I.fmt(xw.shape)}, {I.fmt(h0.shape)}, {I.fmt(w_hh.shape)}")
    hidden = h0.shape[1]
    pairs = [(tuple(xw.shape[2:]), (3 * hidden,)), (tuple(w_hh.shape), (3 * hidden, hidden))]
    if b_hh is not None:
        pairs.append((tuple(b_hh.shape), (3 * hidden,)))
    if hidden != -1 and any(-1 not in got and got != need for got, need in pairs):
        raise OpError(f"gru_sequence: hidden size {hidden} needs xw [T, B, {3 * hidden}], "
                      f"w_hh [{3 * hidden}, {hidden}] and b_hh [{3 * hidden}]; got "
                      + ", ".join(I.fmt(got) for got, _ in pairs))


def _gru_infer(xw, h0, w_hh, b_hh, lengths, reverse=False):
    _check(xw, h0, w_hh, b_hh, lengths)
    steps, batch = xw.shape[:2]
    hidden = h0.shape[1]
    return (Meta((steps, batch, hidden), xw.dtype), Meta((batch, hidden), xw.dtype),
            Meta((steps, batch, 4 * hidden), xw.dtype), Meta((steps, batch, hidden), xw.dtype))


def _step_grads(r, z, c, hp_c, h_prev, dh):
    """One step of the recurrence backwards, in arithmetic alone (NumPy arrays in the kernel,
    tensors in `_differentiable_grad`): from the saved gates, the state the step started from
    and the gradient of its new state, the gradients of the three gates' input
    pre-activations (r, z, c), of hp_c, and of the previous state through `z * h` alone."""
    d_pre_c = dh * (1 - z) * (1 - c * c)
    pre = (d_pre_c * hp_c * r * (1 - r), dh * (h_prev - c) * z * (1 - z), d_pre_c)
    return pre, d_pre_c * r, dh * z


def _gru_grad_kernel(xp, d_out, d_last, h0, w_hh, b_hh, lengths, saved, prevs, reverse=False):
    """(d xw, d h0, d w_hh, d b_hh): the recurrence run backwards, step by step."""
    hidden = prevs.shape[-1]
    native = NATIVE_KERNELS.get("gru_backward")
    done = native(xp, d_out, d_last, w_hh, lengths, saved, prevs, reverse) \
        if native is not None else None
    if done is None:
        done = _grad_loop(xp, d_out, d_last, w_hh, lengths, saved, prevs, reverse)
    d_xw, d_hp, d_h0 = done
    d_hp = d_hp.reshape(-1, 3 * hidden)
    d_w = (d_hp.T @ prevs.reshape(-1, hidden)).astype(w_hh.dtype, copy=False)
    return d_xw, d_h0, d_w, d_hp.sum(axis=0)


def _grad_loop(xp, d_out, d_last, w_hh, lengths, saved, prevs, reverse):
    """(d xw, d hp (the hidden projection's), d h0) by NumPy calls per step."""
    steps, hidden = prevs.shape[0], prevs.shape[-1]
    d_xw = xp.empty(saved.shape[:2] + (3 * hidden,), saved.dtype)
    d_hp = xp.empty_like(d_xw)
    valid = _valid(xp, lengths, steps, saved.dtype)
    dh = d_last
    for t in reversed(step_order(steps, reverse)):
        s = saved[t]
        g = dh + d_out[t] if valid is None else (dh + d_out[t]) * valid[t]
        pre, d_hc, direct = _step_grads(*(s[:, k * hidden:(k + 1) * hidden] for k in range(4)),
                                        prevs[t], g)
        for k, part in enumerate(pre):
            d_xw[t, :, k * hidden:(k + 1) * hidden] = part
        d_hp[t, :, :2 * hidden] = d_xw[t, :, :2 * hidden]
        d_hp[t, :, 2 * hidden:] = d_hc
        step_dh = direct + d_hp[t] @ w_hh
        dh = step_dh if valid is None else step_dh + dh * (1 - valid[t])
    return d_xw, d_hp, dh


def _gru_grad_infer(d_out, d_last, h0, w_hh, b_hh, lengths, saved, prevs, reverse=False):
    steps, batch, hidden = prevs.shape
    return (Meta((steps, batch, 3 * hidden), prevs.dtype), Meta(tuple(h0.shape), h0.dtype),
            Meta(tuple(w_hh.shape), w_hh.dtype), Meta((w_hh.shape[0],), w_hh.dtype))


def _gru_grad(ins, outs, gs, attrs):
    xw, h0, w_hh, b_hh, lengths = ins
    if STATE.create_graph:  # a second derivative will follow (a gradient penalty)
        grads = _differentiable_grad(xw, h0, w_hh, b_hh, lengths, gs[0], gs[1],
                                     attrs["reverse"])
    else:
        grads = bind(GRU_SEQUENCE_GRAD, (gs[0], gs[1], h0, w_hh, b_hh, lengths, *outs[2:]),
                     attrs)
    d_xw, d_h0, d_w, d_b = grads
    return [d_xw, d_h0, d_w, d_b if b_hh is not None else None, None]


def _differentiable_grad(xw, h0, w_hh, b_hh, lengths, d_out, d_last, reverse):
    """(d xw, d h0, d w_hh, d b_hh) built from ops, so that they can be differentiated again:
    the forward recomputed step by step as `GRUCell.step`'s ops, then the recurrence run
    backwards with `_step_grads` (see `nn_rnn._differentiable_grad`)."""
    steps, hidden = xw.shape[0], h0.shape[-1]
    if steps < 0:
        raise OpError("gru_sequence: a second derivative needs a known number of steps; "
                      f"the inputs are {I.fmt(xw.shape)}")
    order = step_order(steps, reverse)
    valid = None if lengths is None else [
        unsqueeze((lengths > t).astype(xw.dtype), -1) for t in range(steps)]
    xs, h = unstack(xw, axis=0), h0
    saved = [None] * steps  # per step: r, z, c, hp_c, the state it started from
    for t in order:
        hp = matmul(h, w_hh, transpose_y=True)
        hp = hp if b_hh is None else hp + b_hh
        (x_r, x_z, x_c), (h_r, h_z, h_c) = split(xs[t], 3, axis=-1), split(hp, 3, axis=-1)
        r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
        c = tanh(x_c + r * h_c)
        saved[t] = (r, z, c, h_c, h)
        new = (h - c) * z + c
        h = new if valid is None else new * valid[t] + h * (1 - valid[t])
    d_outs, dh = unstack(d_out, axis=0), d_last
    d_xw, d_hp = [None] * steps, [None] * steps
    for t in reversed(order):
        g = dh + d_outs[t] if valid is None else (dh + d_outs[t]) * valid[t]
        pre, d_hc, direct = _step_grads(*saved[t], g)
        d_xw[t], d_hp[t] = concat(list(pre), axis=-1), concat([pre[0], pre[1], d_hc], axis=-1)
        step_dh = direct + matmul(d_hp[t], w_hh)
        dh = step_dh if valid is None else step_dh + dh * (1 - valid[t])
    d_hp = reshape(stack(d_hp, axis=0), [-1, 3 * hidden])
    prevs = reshape(stack([saved[t][4] for t in range(steps)], axis=0), [-1, hidden])
    d_w = matmul(d_hp, prevs, transpose_x=True)
    return stack(d_xw, axis=0), dh, d_w, None if b_hh is None else reduce_sum(d_hp, axis=0)


GRU_SEQUENCE = register(
    "gru_sequence", kernel=_gru_kernel, infer=_gru_infer, grad=_gru_grad,
    doc="All steps of one GRU direction from the projected inputs: (h of every step, the last "
        "h, saved gates of every step, the state every step started from).")
GRU_SEQUENCE_GRAD = register(
    "gru_sequence_grad", kernel=_gru_grad_kernel, infer=_gru_grad_infer,
    grad=refuse_second_derivative("gru_sequence", "a GRU"),
    doc="The gradient of gru_sequence (the recurrence run backwards); under create_graph "
        "gru_sequence's rule builds a differentiable backward of ops instead.")


def gru_sequence(xw, h0, w_hh, b_hh=None, lengths=None, reverse: bool = False):
    """(outputs [T, B, H], last state [B, H], saved gates [T, B, 4H], the state of every step's
    start [T, B, H]) of one GRU direction over the projected inputs `xw` [T, B, 3H] (`b_ih`
    included, `b_hh` not: the reset gate scales its c part) from state `h0`; row b's steps
    past `lengths[b]` keep its state and output zeros; `reverse` runs the steps from T-1 down
    to 0 (each output stays at its step's place)."""
    return bind(GRU_SEQUENCE, (xw, h0, w_hh, b_hh, lengths), {"reverse": bool(reverse)})
