"""Generated training code for which parameters a call reaches (issue 33): heads of a Layer
passed in, used under tensor `if`s (with `else`, nested), in graph loops that may run zero
times, after an early `return`, behind a `detach()` a tensor condition chooses, by a value
nothing returned depends on, by a head a Python field of the argument picks; then
`backward()` and an optimizer step with weight decay and momentum, either by the caller
after the converted forward or inside the converted function (a whole training step).

`programs()` is a hypothesis strategy of `(source, inputs)`: `source` defines `f(x, y, o)`
(x, y: float32 [3]; o: a `Trainer` made by `make_trainer`, one per side for all calls, whose
parameters, their `.grad` (None or values) after each call and the optimizer's effect are
compared); `inputs` are several (x, y) pairs whose signs differ, so tensor conditions go
different ways through one converted program.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import runtime as rt

from .gen_state import VECTOR, indent

PRELUDE = '''\
def f(x, y, o):
    net = o.net
    h = rt.tanh(net.embed(x))
    k = rt.zeros([])
'''

LOSS = "loss = (h * h).mean() + (y * h).sum() * 0.1"
# The loss first: the caller runs backward() on it and steps the optimizer ...
# (the loss logged rounded: the program may round float32 sums in another order)
RETURN = ("return loss, round(loss.item(), 4), bool(h.max() > 0.0), int(rt.argmax(h))",)
# ... or the function does (a whole training step converted; the loss comes back a number).
# (an early return under a tensor `if` does both there: backward() and the step on the runs
# that take it)
RETURN_STEPPED = ("loss.backward()", "o.opt.step()",
                  "return round(loss.item(), 4), loss.stop_gradient, int(rt.argmax(h))")

TENSOR_CONDS = ("h.mean() > 0.0", "h.sum() > 0.5", "x[0] > y[1]", "rt.max(h) > 0.3")
PY_CONDS = ("o.mode == 'a'", "o.depth > 1")

# Statements valid anywhere (graph loop bodies too); each reads some parameters.
ANYWHERE = (
    "h = rt.tanh(net.a(h))",
    "h = rt.tanh(net.b(h)) + h * 0.5",
    "h = h * net.scale",
    "h = h + rt.sin(net.c(h)) * 0.25",
    "unused = net.d(h)",
    "h = rt.tanh(net.heads[{j}](h))",
    "h = rt.tanh(net.heads[o.pick](h))",
    "h = h + y * 0.5",
)


@st.composite
def _stmt(draw, depth: int, in_loop: bool, ending: tuple, detach: bool):
    kinds = ["simple"] * 4 + (["detach"] if detach else [])
    if depth > 0:
        kinds += ["tif", "tif_else", "pif", "twhile", "twhile_maybe_none", "trange"]
    if depth > 0 and not in_loop:
        kinds += ["treturn"]
    kind = draw(st.sampled_from(kinds))
    if kind == "simple":
        return draw(st.sampled_from(ANYWHERE)).format(j=draw(st.integers(0, 1))).splitlines()
    cond = draw(st.sampled_from(TENSOR_CONDS))
    if kind == "detach":  # a tensor condition decides whether earlier parameters are reached
        return [f"if {cond}:", "    h = h.detach() * 0.5"]
    looped = in_loop or kind in ("twhile", "twhile_maybe_none", "trange")
    body = draw(_block(depth - 1, looped, ending, detach))
    other = draw(_block(depth - 1, in_loop, ending, detach))
    if kind == "tif":
        return [f"if {cond}:"] + indent(body)
    if kind == "tif_else":
        return [f"if {cond}:"] + indent(body) + ["else:"] + indent(other)
    if kind == "pif":
        return ([f"if {draw(st.sampled_from(PY_CONDS))}:"] + indent(body) + ["else:"]
                + indent(other))
    if kind == "treturn":
        return [f"if {cond}:"] + indent(body + [LOSS, *ending])
    k = f"k{depth}"
    if kind == "twhile":  # 1..4 trips
        return ([f"{k} = rt.zeros([])", f"while {k} < rt.abs(x[0]) + 0.5:",
                 f"    {k} = {k} + 1.0"] + indent(body))
    if kind == "twhile_maybe_none":  # zero trips for x[0] <= 0
        return [f"{k} = rt.zeros([])", f"while {k} < x[0]:", f"    {k} = {k} + 1.0"] + indent(
            body)
    return ["for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), 'int64')):"] + indent(body)


@st.composite
def _block(draw, depth: int, in_loop: bool, ending: tuple, detach: bool):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out += draw(_stmt(depth, in_loop, ending, detach))
    return out


@st.composite
def programs(draw, depth: int = 2, detach: bool = True):
    """`detach=False` leaves out a `detach()` under a tensor condition."""
    ending = draw(st.sampled_from((RETURN, RETURN_STEPPED)))
    body = draw(_block(depth, False, ending, detach))
    source = PRELUDE + "\n".join("    " + ln for ln in [*body, LOSS, *ending]) + "\n"
    inputs = draw(st.lists(st.tuples(VECTOR, VECTOR), min_size=3, max_size=3))
    inputs[0] = ([abs(v) for v in inputs[0][0]], inputs[0][1])  # both ways through each
    inputs[1] = ([-abs(v) for v in inputs[1][0]], inputs[1][1])  # tensor condition on x
    return source, inputs


class Heads(rt.nn.Layer):
    """An embedding, four heads, a raw parameter and a LayerList of two more heads."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 3)
        self.a = rt.nn.Linear(3, 3)
        self.b = rt.nn.Linear(3, 3)
        self.c = rt.nn.Linear(3, 3)
        self.d = rt.nn.Linear(3, 3)
        self.heads = rt.nn.LayerList([rt.nn.Linear(3, 3) for _ in range(2)])
        self.scale = self.create_parameter([3])


class Trainer:
    """The object passed in as `o`: a `Heads` with fixed starting weights (the same on both
    sides), a Momentum optimizer with weight decay, and Python fields the caller changes
    between calls (`mode`, `depth`, `pick`: programs traced for old values must not be
    reused). `after_call` runs after each call as a training loop would: `backward()` of the
    returned loss and an optimizer step (unless the function did both), then keeps every
    parameter's `.grad` and clears it."""

    MODES = ("a", "a", "b")
    DEPTHS = (2, 2, 1)
    PICKS = (0, 0, 1)

    def __init__(self):
        rng = np.random.default_rng(7)
        self.net = Heads()
        for p in self.net.parameters():
            p.set_value(rng.uniform(-0.8, 0.8, p.shape).astype("float32"))
        self.opt = rt.optimizer.Momentum(0.1, momentum=0.9, parameters=self.net.parameters(),
                                         weight_decay=0.05)
        self.calls = 0
        self.mode, self.depth, self.pick = self.MODES[0], self.DEPTHS[0], self.PICKS[0]
        self.grads: dict = {}

    def reset(self):
        k = self.calls % len(self.MODES)
        self.mode, self.depth, self.pick = self.MODES[k], self.DEPTHS[k], self.PICKS[k]
        self.calls += 1

    def after_call(self, out):
        loss = out[0]  # (a number where the function stepped itself)
        if isinstance(loss, rt.Tensor) and not loss.stop_gradient:
            loss.backward()
            self.opt.step()
        self.grads = {name: None if p.grad is None else p.grad.numpy().copy()
                      for name, p in self.net.named_parameters()}
        self.opt.clear_grad(set_to_zero=False)

    def observed(self) -> dict:
        """What the comparison reads: the fields, each parameter and its last `.grad`."""
        return {"mode": self.mode, "depth": self.depth, "pick": self.pick,
                "params": {n: p.numpy() for n, p in self.net.named_parameters()},
                "grads": self.grads}


def make_trainer():
    return Trainer()
