"""Recurrent layers with Paddle's gate layouts, parameter names and return values.

Cells compute one step on `[batch, input_size]` (`forward` = `step(project_inputs(x), h)`);
`RNN` / `BiRNN` project the inputs of all steps with one matmul, then run `cell.step` (not
`cell(...)`, so a cell's forward hooks do not fire per step) over time with a
Python loop of ops (so a converted `forward` unrolls it), or, when a static program is built
for an unknown number of steps, with one `while` op; `SimpleRNN`, `LSTM` and `GRU` stack
layers and directions.

Gates (rows of `weight_ih` / `weight_hh`, shapes `[gates * hidden, input]` and
`[gates * hidden, hidden]`, all initialised U(-1/sqrt(hidden), 1/sqrt(hidden))):

- LSTM: i, f, g (cell candidate), o;  c' = f*c + i*g,  h' = o*tanh(c')
- GRU:  r, z, c;  c = tanh(x_c + r * (h W_hc + b_hc)),  h' = z*h + (1-z)*c

With `sequence_length`, steps past a sequence's end keep its state and output zeros, so the
final states are those at each sequence's last valid step (also for the reverse direction).
"""
from __future__ import annotations

import math as _math

from ...ops import arrays, combine, creation, reduce
from ...ops import nn as nn_ops
from ...ops import shape as shp
from ...ops.linalg import matmul
from ...ops.math import tanh
from ...ops.nn_gru import gru_sequence
from ...ops.nn_rnn import lstm_sequence
from ...program import control_flow
from .. import functional as F
from ..container import LayerList
from ..initializer import Uniform
from ..layer import Layer
from .compat import refuse


def _map(fn, *trees):
    """Apply `fn` leaf-wise to equally nested tuples/lists of tensors."""
    if isinstance(trees[0], (tuple, list)):
        return tuple(_map(fn, *parts) for parts in zip(*trees))
    return fn(*trees)


# ---- cells ----------------------------------------------------------------------------------

class RNNCellBase(Layer):
    """Shared parts of the cells: input and hidden projections and initial states."""

    def project_inputs(self, inputs):
        """x W_ih^T + b_ih: for one step `[B, I]`, or for all steps `[T, B, I]` at once (what
        `RNN` does: one large matmul instead of one per step)."""
        x = matmul(inputs, self.weight_ih, transpose_y=True)
        return x if self.bias_ih is None else x + self.bias_ih

    def _project_hidden(self, h):
        h = matmul(h, self.weight_hh, transpose_y=True)
        return h if self.bias_hh is None else h + self.bias_hh

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        return self.step(self.project_inputs(inputs), states)

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value: float = 0.0,
                           batch_dim_idx: int = 0):
        """States filled with `init_value`, `[batch] + shape` each, the batch size read from
        `batch_ref` by ops (so it may be unknown while a static program is built)."""
        shape = self.state_shape if shape is None else shape
        batch_dim = batch_dim_idx % len(batch_ref.shape)
        others = [i for i in range(len(batch_ref.shape)) if i != batch_dim]
        batch = reduce.sum(creation.zeros_like(batch_ref), axis=others)  # [B] zeros
        dtype = dtype or batch_ref.dtype

        def make(state_shape):
            column = shp.reshape(batch, [-1] + [1] * len(state_shape))
            return column + creation.full(list(state_shape), init_value, dtype=dtype)

        return make(shape) if _is_shape(shape) else tuple(make(s) for s in shape)


def _is_shape(s) -> bool:
    return all(isinstance(d, int) for d in s)


class _GatedCell(RNNCellBase):
    """A cell whose weights stack `GATES` blocks of `hidden_size` rows, built from Paddle's
    arguments."""

    GATES = 1

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        init = Uniform(-1.0 / _math.sqrt(hidden_size), 1.0 / _math.sqrt(hidden_size))
        rows = self.GATES * hidden_size
        self.weight_ih = self.create_parameter([rows, input_size], weight_ih_attr,
                                               default_initializer=init)
        self.weight_hh = self.create_parameter([rows, hidden_size], weight_hh_attr,
                                               default_initializer=init)
        self.bias_ih = self.create_parameter([rows], bias_ih_attr, is_bias=True,
                                             default_initializer=init)
        self.bias_hh = self.create_parameter([rows], bias_hh_attr, is_bias=True,
                                             default_initializer=init)

    @property
    def state_shape(self):
        return (self.hidden_size,)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class SimpleRNNCell(_GatedCell):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act 'tanh' (default) or 'relu'.

    >>> import runtime as rt
    >>> cell = rt.nn.SimpleRNNCell(4, 8)
    >>> out, h = cell(rt.ones([2, 4]))
    >>> out.shape, cell.weight_ih.shape
    ([2, 8], [8, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, activation: str = "tanh",
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None):
        if activation not in ("tanh", "relu"):
            raise ValueError(f"SimpleRNNCell: activation must be 'tanh' or 'relu', got "
                             f"{activation!r}")
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr)
        self.activation = activation

    def step(self, x, states):
        """One step from the projected input `x`; returns (output, new states)."""
        pre = x + self._project_hidden(states)
        out = tanh(pre) if self.activation == "tanh" else nn_ops.relu(pre)
        return out, out

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, activation={self.activation}"


class LSTMCell(_GatedCell):
    """One LSTM step; states are (h, c). Returns (h', (h', c')).

    >>> import runtime as rt
    >>> out, (h, c) = rt.nn.LSTMCell(4, 8)(rt.ones([2, 4]))
    >>> out.shape, c.shape
    ([2, 8], [2, 8])
    """

    GATES = 4

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, proj_size: int = 0,
                 name=None):
        if proj_size:
            refuse("LSTMCell", "proj_size", proj_size, "LSTM with a projected hidden state")
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, name)

    @property
    def state_shape(self):
        return ((self.hidden_size,), (self.hidden_size,))

    def step(self, x, states):
        """One step from the projected input `x`; returns (h', (h', c'))."""
        h, c = states
        i, f, g, o = combine.split(x + self._project_hidden(h), 4, axis=-1)
        c = nn_ops.sigmoid(f) * c + nn_ops.sigmoid(i) * tanh(g)
        h = nn_ops.sigmoid(o) * tanh(c)
        return h, (h, c)


class GRUCell(_GatedCell):
    """One GRU step (Paddle/cuDNN form: the reset gate scales h W_hc + b_hc).

    >>> import runtime as rt
    >>> out, h = rt.nn.GRUCell(4, 8)(rt.ones([2, 4]))
    >>> out.shape
    [2, 8]
    """

    GATES = 3

    def step(self, x, states):
        """One step from the projected input `x`; returns (h', h')."""
        h = self._project_hidden(states)
        x_r, x_z, x_c = combine.split(x, 3, axis=-1)
        h_r, h_z, h_c = combine.split(h, 3, axis=-1)
        r = nn_ops.sigmoid(x_r + h_r)
        z = nn_ops.sigmoid(x_z + h_z)
        c = tanh(x_c + r * h_c)
        out = (states - c) * z + c
        return out, out


# ---- running a cell over time ---------------------------------------------------------------

def _one_step(cell, x_t, t, states, sequence_length):
    """Step `t` (an int, or an int64 tensor inside a graph loop) of `cell` from its projected
    input `x_t`; past a sequence's end the state is kept and the output is zero."""
    out, new_states = cell.step(x_t, states)
    if sequence_length is None:
        return out, new_states
    valid = shp.unsqueeze((sequence_length > t).astype(x_t.dtype), -1)  # [B, 1]
    return out * valid, _map(lambda old, new: new * valid + old * (1.0 - valid), states,
                             new_states)


def _unrolled(cell, x, states, sequence_length, is_reverse):
    # one unstack (and one stack in backward) instead of a getitem per step, whose gradients
    # would each be a full-size array
    inputs = combine.unstack(x, axis=0)
    outputs = [None] * len(inputs)
    for t in (range(len(inputs) - 1, -1, -1) if is_reverse else range(len(inputs))):
        outputs[t], states = _one_step(cell, inputs[t], t, states, sequence_length)
    return combine.stack(outputs, axis=0), states


def _graph_loop(cell, x, states, sequence_length, is_reverse):
    """The number of steps is known only at run time (static mode): one while op over t,
    outputs collected in a tensor array."""
    steps = shp.shape(x)[0]
    outputs = arrays.create_array(x.dtype)

    def body(i, states, outputs):
        t = steps - 1 - i if is_reverse else i
        out, states = _one_step(cell, x[t], t, states, sequence_length)
        return [i + 1, states, arrays.array_write(out, i, outputs)]

    _, states, outputs = control_flow.while_loop(
        lambda i, states, outputs: i < steps, body,
        [creation.zeros([], dtype="int64"), states, outputs])
    out = arrays.array_stack(outputs, axis=0)
    return (shp.flip(out, [0]) if is_reverse else out), states


def _lstm_sequence(cell, x, states, is_reverse):
    """All steps of an `LSTMCell` as one op (`ops/nn_rnn.py`): (outputs, (h, c))."""
    xw = cell.project_inputs(x)
    if cell.bias_hh is not None:
        xw = xw + cell.bias_hh
    h0, c0 = states
    out, c_last, _, _ = lstm_sequence(xw, h0, c0, cell.weight_hh, reverse=is_reverse)
    return out, (out[0] if is_reverse else out[-1], c_last)


def _gru_sequence(cell, x, state, sequence_length, is_reverse):
    """All steps of a `GRUCell` as one op (`ops/nn_gru.py`): (outputs, last state)."""
    out, last, _, _ = gru_sequence(cell.project_inputs(x), state, cell.weight_hh,
                                   cell.bias_hh, sequence_length, reverse=is_reverse)
    return out, last


def _run(cell, inputs, states, sequence_length, is_reverse, time_major):
    """Run `cell` over the time axis; returns (outputs with inputs' layout, final states).
    Over a known number of steps, a GRUCell and (without `sequence_length`) an LSTMCell, not
    subclasses with their own `step`, are one op; other cells a Python loop of ops when the
    number of steps is known (always in eager mode), else a graph loop."""
    perm = [1, 0] + list(range(2, len(inputs.shape)))
    x = inputs if time_major else shp.transpose(inputs, perm)
    if states is None:
        states = cell.get_initial_states(x, batch_dim_idx=1)
    step = type(cell).step
    if step is LSTMCell.step and sequence_length is None and x.shape[0] > 0:
        out, states = _lstm_sequence(cell, x, states, is_reverse)
        return (out if time_major else shp.transpose(out, perm)), states
    if step is GRUCell.step and x.shape[0] > 0:
        out, states = _gru_sequence(cell, x, states, sequence_length, is_reverse)
        return (out if time_major else shp.transpose(out, perm)), states
    loop = _unrolled if x.shape[0] >= 0 else _graph_loop
    out, states = loop(cell, cell.project_inputs(x), states, sequence_length, is_reverse)
    return (out if time_major else shp.transpose(out, perm)), states


class RNN(Layer):
    """Run a cell over a sequence `[batch, time, ...]` (`[time, batch, ...]` if
    `time_major`). Returns (outputs, final_states).

    >>> import runtime as rt
    >>> out, h = rt.nn.RNN(rt.nn.GRUCell(4, 8))(rt.ones([2, 5, 4]))
    >>> out.shape, h.shape
    ([2, 5, 8], [2, 8])
    """

    def __init__(self, cell: RNNCellBase, is_reverse: bool = False, time_major: bool = False):
        super().__init__()
        self.cell, self.is_reverse, self.time_major = cell, is_reverse, time_major

    def forward(self, inputs, initial_states=None, sequence_length=None):
        return _run(self.cell, inputs, initial_states, sequence_length, self.is_reverse,
                    self.time_major)


class BiRNN(Layer):
    """A forward and a backward cell over the same sequence; outputs are concatenated on the
    last axis, states returned as (forward_states, backward_states)."""

    def __init__(self, cell_fw: RNNCellBase, cell_bw: RNNCellBase, time_major: bool = False):
        super().__init__()
        self.cell_fw, self.cell_bw, self.time_major = cell_fw, cell_bw, time_major

    def forward(self, inputs, initial_states=None, sequence_length=None):
        fw_init, bw_init = (None, None) if initial_states is None else initial_states
        out_fw, st_fw = _run(self.cell_fw, inputs, fw_init, sequence_length, False,
                             self.time_major)
        out_bw, st_bw = _run(self.cell_bw, inputs, bw_init, sequence_length, True,
                             self.time_major)
        return combine.concat([out_fw, out_bw], axis=-1), (st_fw, st_bw)


# ---- multi-layer networks -------------------------------------------------------------------

class RNNBase(LayerList):
    """Stacked (and optionally bidirectional) recurrent network over one cell type.

    Parameters are also exposed under Paddle's flat names (`weight_ih_l0`, `bias_hh_l1`,
    `weight_ih_l0_reverse`, ...), which are the names `state_dict` uses.
    """

    _cell = None  # set by subclasses

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, **cell_kwargs):
        super().__init__()
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise ValueError(f"{type(self).__name__}: direction must be 'forward' or "
                             f"'bidirect', got {direction!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.num_directions = 1 if direction == "forward" else 2
        self.direction, self.time_major, self.dropout = direction, time_major, dropout
        attrs = dict(weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr,
                     bias_ih_attr=bias_ih_attr, bias_hh_attr=bias_hh_attr, **cell_kwargs)
        cells = []
        for i in range(num_layers):
            size = input_size if i == 0 else hidden_size * self.num_directions
            layer_cells = [self._cell(size, hidden_size, **attrs)
                           for _ in range(self.num_directions)]
            cells.append(layer_cells)
            self.append(RNN(layer_cells[0], False, time_major) if self.num_directions == 1
                        else BiRNN(*layer_cells, time_major=time_major))
        for i, layer_cells in enumerate(cells):
            for d, cell in enumerate(layer_cells):
                suffix = "_reverse" if d else ""
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    param = getattr(cell, name)
                    if param is not None:
                        setattr(self, f"{name}_l{i}{suffix}", param)
        self.state_components = 2 if self._cell is LSTMCell else 1

    def forward(self, inputs, initial_states=None, sequence_length=None):
        per_layer = self._split_states(initial_states)
        finals = []
        x = inputs
        for i, layer in enumerate(self):
            if i > 0 and self.dropout > 0:
                x = F.dropout(x, self.dropout, training=self.training)
            init = per_layer[i]
            if init is not None and self.num_directions == 1:
                init = init[0]
            x, states = layer(x, init, sequence_length)
            finals.extend(states if self.num_directions == 2 else [states])
        return x, self._stack_states(finals)

    def _split_states(self, initial_states):
        """[L*D, B, H] tensors (a (h, c) pair for LSTM) -> per layer, a list of D states."""
        if initial_states is None:
            return [None] * self.num_layers
        n = self.num_layers * self.num_directions

        def unstack(t):
            return [shp.squeeze(p, 0) for p in combine.split(t, n, axis=0)]

        if self.state_components == 2:
            hs, cs = (unstack(t) for t in initial_states)
            flat = list(zip(hs, cs))
        else:
            flat = unstack(initial_states)
        d = self.num_directions
        return [flat[i * d:(i + 1) * d] for i in range(self.num_layers)]

    def _stack_states(self, finals):
        if self.state_components == 2:
            return (combine.stack([h for h, _ in finals], axis=0),
                    combine.stack([c for _, c in finals], axis=0))
        return combine.stack(finals, axis=0)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.direction != "forward":
            text += f", direction={self.direction}"
        if self.time_major:
            text += ", time_major=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        return text


class SimpleRNN(RNNBase):
    """Elman RNN (`activation` 'tanh' or 'relu'). Returns (outputs, h_n), h_n
    `[num_layers * num_directions, batch, hidden]`.

    >>> import runtime as rt
    >>> out, h = rt.nn.SimpleRNN(4, 8, num_layers=2)(rt.ones([3, 5, 4]))
    >>> out.shape, h.shape
    ([3, 5, 8], [2, 3, 8])
    """

    _cell = SimpleRNNCell

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 activation: str = "tanh", weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
                         activation=activation)


class LSTM(RNNBase):
    """Long short-term memory. Returns (outputs, (h_n, c_n)); `initial_states` is (h_0, c_0),
    each `[num_layers * num_directions, batch, hidden]`.

    >>> import runtime as rt
    >>> lstm = rt.nn.LSTM(4, 8, direction='bidirect')
    >>> out, (h, c) = lstm(rt.ones([3, 5, 4]))
    >>> out.shape, h.shape, lstm.weight_ih_l0_reverse.shape
    ([3, 5, 16], [2, 3, 8], [32, 4])
    """

    _cell = LSTMCell

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, proj_size: int = 0, name=None):
        if proj_size:
            refuse("LSTM", "proj_size", proj_size, "LSTM with a projected hidden state")
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)


class GRU(RNNBase):
    """Gated recurrent unit network. Returns (outputs, h_n).

    >>> import runtime as rt
    >>> out, h = rt.nn.GRU(4, 8)(rt.ones([3, 5, 4]))
    >>> out.shape, h.shape
    ([3, 5, 8], [1, 3, 8])
    """

    _cell = GRUCell

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
