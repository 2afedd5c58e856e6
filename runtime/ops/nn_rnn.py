"""A whole LSTM layer direction as one op: all time steps of the recurrence in one kernel.

`lstm_sequence(xw, h0, c0, w_hh)` runs, for t = 0..T-1 (T-1..0 with `reverse=True`; `xw` is
`[T, B, 4H]`, the inputs
already projected with both biases added: `x W_ih^T + b_ih + b_hh`):

    gates = xw[t] + h W_hh^T;  i, f, g, o = split(gates, 4)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g);  h = sigmoid(o) * tanh(c)

and returns (the h of every step `[T, B, H]`, the last c `[B, H]`, the c of every step
`[T, B, H]`, the activated gates of every step `[T, B, 4H]`). The last two are what the
gradient reads (not differentiable outputs: an inference program leaves them unread, and the
ONNX exporter maps the first two to ONNX's LSTM); `lstm_sequence_grad` runs the recurrence
backwards in one kernel too, and the gradient of `W_hh` is one GEMM over all steps after the
loop.

Why one op: the layer unrolled as ops is about 12 ops per step forward and 30 backward, each
a Python dispatch of a few microseconds on small [B, H] arrays (the zoo's LSTM LM: T = 20, two
layers, B = 16, H = 32: 1,700 ops per training step); here the step is a handful of NumPy calls
inside one kernel, in eager and static mode alike (`runtime/nn/layers/rnn.py` uses it for
`LSTMCell` over a known number of steps without `sequence_length`).
"""
from __future__ import annotations

from . import infer as I
from .combine import concat, split, stack, unstack
from .linalg import matmul
from .math import tanh
from .nn import check_float, sigmoid
from .registry import STATE, Meta, OpError, bind, register
from .shape import reshape

# generated C installed by runtime/program/lstm_native.py and gru_native.py (ops may not
# import the program package): "lstm_forward", "lstm_backward", "gru_forward" and
# "gru_backward", each returning None where it does not apply
NATIVE_KERNELS: dict = {}


def sigmoid_into(xp, x, out):
    # as `_sigmoid_kernel`: exp of -|x| never overflows, each branch exact on its half
    e = xp.exp(-xp.abs(x))
    xp.divide(xp.where(x >= 0, 1, e), 1 + e, out=out)


def step_order(steps: int, reverse: bool) -> range:
    """The time steps in the order the recurrence visits them."""
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _lstm_kernel(xp, xw, h0, c0, w_hh, reverse=False):
    native = NATIVE_KERNELS.get("lstm_forward")
    done = native(xp, xw, h0, c0, w_hh, reverse) if native is not None else None
    if done is not None:
        return done
    steps, hidden = xw.shape[0], h0.shape[-1]
    out = xp.empty(xw.shape[:2] + (hidden,), xw.dtype)
    cs = xp.empty_like(out)
    acts = xp.empty_like(xw)
    w_t = w_hh.T
    h, c = h0, c0
    for t in step_order(steps, reverse):
        gates = xw[t] + h @ w_t
        a = acts[t]
        sigmoid_into(xp, gates, a)  # i, f, o (the g quarter is overwritten with its tanh)
        g = a[:, 2 * hidden:3 * hidden]
        xp.tanh(gates[:, 2 * hidden:3 * hidden], out=g)
        c = a[:, hidden:2 * hidden] * c
        c += a[:, :hidden] * g
        cs[t] = c
        h = out[t]
        xp.multiply(a[:, 3 * hidden:], xp.tanh(c), out=h)
    return out, cs[0 if reverse else -1].copy(), cs, acts


def _lstm_infer(xw, h0, c0, w_hh, reverse=False):
    for name, x in (("xw", xw), ("h0", h0), ("c0", c0), ("w_hh", w_hh)):
        check_float("lstm_sequence", name, x)
    if len(xw.shape) != 3 or len(h0.shape) != 2 or tuple(h0.shape) != tuple(c0.shape) or \
            len(w_hh.shape) != 2:
        raise OpError(f"lstm_sequence: expected xw [T, B, 4H], h0 and c0 [B, H], w_hh [4H, H]; "
                      f"got {I.fmt(xw.shape)}, {I.fmt(h0.shape)}, {I.fmt(c0.shape)}, "
                      f"{I.fmt(w_hh.shape)}")
    hidden = h0.shape[1]
    if -1 not in (hidden, xw.shape[2]) and xw.shape[2] != 4 * hidden or \
            -1 not in (hidden, *w_hh.shape) and tuple(w_hh.shape) != (4 * hidden, hidden):
        raise OpError(f"lstm_sequence: hidden size {hidden} needs xw [T, B, {4 * hidden}] and "
                      f"w_hh [{4 * hidden}, {hidden}]; got {I.fmt(xw.shape)} and "
                      f"{I.fmt(w_hh.shape)}")
    steps, batch = xw.shape[:2]
    return (Meta((steps, batch, hidden), xw.dtype), Meta((batch, hidden), xw.dtype),
            Meta((steps, batch, hidden), xw.dtype), Meta(tuple(xw.shape), xw.dtype))


def _lstm_grad_kernel(xp, d_out, d_c, h0, c0, w_hh, out, cs, acts, reverse=False):
    """(d xw, d h0, d c0, d w_hh): the recurrence run backwards, step by step."""
    steps, hidden = out.shape[0], out.shape[-1]
    native = NATIVE_KERNELS.get("lstm_backward")
    done = native(xp, d_out, d_c, h0, c0, w_hh, out, cs, acts, reverse) \
        if native is not None else None
    if done is not None:
        return (*done, _w_grad(xp, done[0], h0, out, w_hh, reverse))
    d_xw = xp.empty_like(acts)
    dh = xp.zeros_like(h0)
    dc = d_c
    first = steps - 1 if reverse else 0
    for t in reversed(step_order(steps, reverse)):
        a = acts[t]
        i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
        dh = dh + d_out[t]
        c_prev = c0 if t == first else cs[t + 1 if reverse else t - 1]
        gates, dc = _step_grads(i, f, g, o, xp.tanh(cs[t]), c_prev, dh, dc)
        d = d_xw[t]
        for k, part in enumerate(gates):
            d[:, k * hidden:(k + 1) * hidden] = part
        dh = d @ w_hh
    return d_xw, dh, dc, _w_grad(xp, d_xw, h0, out, w_hh, reverse)


def _step_grads(i, f, g, o, tanh_c, c_prev, dh, dc):
    """One step of the recurrence backwards, in arithmetic alone (NumPy arrays in the kernel,
    tensors in `_differentiable_grad`): from the activated gates, tanh of the step's c, the
    previous c and the gradients of the step's h and c, the gradients of the four gates'
    pre-activations and of the previous c."""
    dc = dc + dh * o * (1 - tanh_c * tanh_c)
    gates = (dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
             dh * tanh_c * o * (1 - o))
    return gates, dc * f


def _w_grad(xp, d_xw, h0, out, w_hh, reverse):
    """d W_hh: the gates' gradients of every step times the h they read, as one GEMM."""
    hidden = h0.shape[-1]
    parts = [out[1:], h0[None]] if reverse else [h0[None], out[:-1]]
    h_prev = xp.concatenate(parts, axis=0).reshape(-1, hidden)
    d_w = d_xw.reshape(-1, 4 * hidden).T @ h_prev
    return d_w.astype(w_hh.dtype, copy=False)


def _lstm_grad_infer(d_out, d_c, h0, c0, w_hh, out, cs, acts, reverse=False):
    return (Meta(tuple(acts.shape), acts.dtype), Meta(tuple(h0.shape), h0.dtype),
            Meta(tuple(c0.shape), c0.dtype), Meta(tuple(w_hh.shape), w_hh.dtype))


def _lstm_grad(ins, outs, gs, attrs):
    if STATE.create_graph:  # a second derivative will follow (a gradient penalty)
        return list(_differentiable_grad(*ins, gs[0], gs[1], attrs["reverse"]))
    _, h0, c0, w_hh = ins
    # (the cells and gates of every step are not differentiable outputs: their gradients are
    # not read)
    out, _, cs, acts = outs
    d_xw, d_h0, d_c0, d_w = bind(LSTM_SEQUENCE_GRAD, (gs[0], gs[1], h0, c0, w_hh, out, cs, acts),
                                 attrs)
    return [d_xw, d_h0, d_c0, d_w]


def _differentiable_grad(xw, h0, c0, w_hh, d_out, d_c, reverse):
    """(d xw, d h0, d c0, d w_hh) built from ops, so that they can be differentiated again:
    the forward recomputed step by step as `LSTMCell.step`'s ops, then the recurrence run
    backwards with `_step_grads`: per step the ops the layer had before it was one op."""
    steps, hidden = xw.shape[0], h0.shape[-1]
    if steps < 0:
        raise OpError("lstm_sequence: a second derivative needs a known number of steps; "
                      f"the inputs are {I.fmt(xw.shape)}")
    order = step_order(steps, reverse)
    xs, h, c = unstack(xw, axis=0), h0, c0
    saved = [None] * steps  # per step: activated gates, tanh(c), previous c, previous h
    for t in order:
        i, f, g, o = split(xs[t] + matmul(h, w_hh, transpose_y=True), 4, axis=-1)
        i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
        c_new = f * c + i * g
        saved[t] = (i, f, g, o, tanh(c_new), c, h)
        c, h = c_new, o * saved[t][4]
    d_outs, dh, dc = unstack(d_out, axis=0), None, d_c
    d_xw = [None] * steps
    for t in reversed(order):
        i, f, g, o, tanh_c, c_prev, _ = saved[t]
        dh = d_outs[t] if dh is None else dh + d_outs[t]
        gates, dc = _step_grads(i, f, g, o, tanh_c, c_prev, dh, dc)
        d_xw[t] = concat(list(gates), axis=-1)
        dh = matmul(d_xw[t], w_hh)
    d_xw = stack(d_xw, axis=0)
    h_prev = reshape(stack([saved[t][6] for t in range(steps)], axis=0), [-1, hidden])
    d_w = matmul(reshape(d_xw, [-1, 4 * hidden]), h_prev, transpose_x=True)
    return d_xw, dh, dc, d_w


def refuse_second_derivative(op: str, layer: str):
    """The gradient rule of a fused recurrence's gradient op: built without create_graph, it
    is not differentiable (under create_graph the forward op's rule builds one of ops)."""
    def rule(ins, outs, gs, attrs):
        raise OpError(f"{op}: its gradient was built without create_graph, so it cannot be "
                      "differentiated again; take the first gradient with "
                      f"rt.grad(..., create_graph=True) to differentiate through {layer} twice")
    return rule


LSTM_SEQUENCE = register(
    "lstm_sequence", kernel=_lstm_kernel, infer=_lstm_infer, grad=_lstm_grad,
    doc="All steps of one LSTM direction from the projected inputs: (h of every step, the last "
        "c, c of every step, activated gates of every step).")
LSTM_SEQUENCE_GRAD = register(
    "lstm_sequence_grad", kernel=_lstm_grad_kernel, infer=_lstm_grad_infer,
    grad=refuse_second_derivative("lstm_sequence", "an LSTM"),
    doc="The gradient of lstm_sequence (the recurrence run backwards); under create_graph "
        "lstm_sequence's rule builds a differentiable backward of ops instead.")


def lstm_sequence(xw, h0, c0, w_hh, reverse: bool = False):
    """(outputs [T, B, H], last cell [B, H], cells [T, B, H], activated gates [T, B, 4H]) of
    one LSTM direction over the projected inputs `xw` [T, B, 4H] (biases included) from
    states `h0`, `c0`; `reverse` runs the steps from T-1 down to 0 (each output stays at its
    step's place; the last cell is then step 0's)."""
    return bind(LSTM_SEQUENCE, (xw, h0, c0, w_hh), {"reverse": bool(reverse)})
