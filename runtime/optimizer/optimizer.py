"""`Optimizer`: what every optimizer shares (state, learning rate, clipping, the update loop).

An optimizer owns, per parameter, a few state tensors (Adam's moments, Momentum's velocity, a
float32 master weight under AMP O2). They are persistable tensors named after the parameter
(`linear_0.w_0_moment1_0`, Paddle's names), created on first use. The update itself is one
registered op per algorithm (`runtime/ops/optim.py`) applied with `Tensor.set_value`, so the
same `.step()` code updates arrays now in eager mode and appends update ops while a static
program is being built.
"""
from __future__ import annotations

from collections.abc import Iterable

from .. import backend, static
from ..autograd import no_grad
from ..ops.logic import logical_and, where
from ..ops.math import assign, sign
from ..ops.registry import STATE
from ..parameter import Parameter, unique_name
from ..program import train_step
from ..regularizer import L1Decay, L2Decay
from ..tensor import Tensor
from .lr import LRScheduler

_LOW_PRECISION = ("float16", "bfloat16")


def l2_coeff(weight_decay) -> float:
    """The L2 coefficient of a `weight_decay` argument (None, a float, `rt.regularizer.L2Decay`
    or `L1Decay`, whose L2 part is 0)."""
    if weight_decay is None:
        return 0.0
    if isinstance(weight_decay, (int, float)):
        return float(weight_decay)
    if isinstance(weight_decay, L1Decay):
        return 0.0
    if not isinstance(weight_decay, L2Decay):
        raise TypeError(f"weight_decay must be a float, rt.regularizer.L2Decay or "
                        f"rt.regularizer.L1Decay, got {type(weight_decay).__name__}")
    return weight_decay.coeff


class Optimizer:
    """Base class. Subclasses list their state in `_states` as (name, initial value or None
    for zeros shaped like the parameter) and implement `_update(param, grad, lr, state)`
    returning the new parameter and a dict of new state values.
    """

    _states: tuple = ()

    def __init__(self, learning_rate: float | LRScheduler = 0.001,
                 parameters: Iterable | None = None, weight_decay=None, grad_clip=None,
                 multi_precision: bool = False, name: str | None = None):
        if not isinstance(learning_rate, (int, float, LRScheduler)):
            raise TypeError(f"{type(self).__name__}: learning_rate must be a float or an "
                            f"LRScheduler, got {type(learning_rate).__name__}")
        if parameters is None and STATE.builder is None:
            raise ValueError(f"{type(self).__name__}: in eager mode pass the parameters to "
                             "optimize, e.g. parameters=model.parameters()")
        self._parameter_list = None if parameters is None else list(parameters)
        if self._parameter_list is not None:
            for p in self._parameter_list:
                if isinstance(p, dict):
                    raise TypeError(f"{type(self).__name__}: parameter groups (dicts) are not "
                                    "supported; pass a flat list of parameters")
            _check_unique_names(self._parameter_list, type(self).__name__)
        self._learning_rate = learning_rate
        l2_coeff(weight_decay)  # reject a bad value now rather than at the first step
        self._weight_decay = weight_decay
        self._grad_clip = grad_clip
        self._multi_precision = multi_precision
        self._accumulators: dict[str, dict[str, Tensor]] = {}
        # the names of the parameters updated so far, in the order of their first update
        # (eager code makes a parameter's state then; a converted step makes it while
        # tracing and its runs record the updates: `train_step.PARAM_UPDATED`)
        self._updated: dict[str, None] = {}
        self._loaded: dict = {}
        self._lr_var = None
        self._lr_number = None  # (float64: the rate as converted code reads it, exactly)
        self._name = name

    # ---- learning rate --------------------------------------------------------------------
    def get_lr(self) -> float:
        """The learning rate in force now (a scheduler's current value). Read in converted
        code, the rate in force when the program runs, a Python float after the call."""
        if STATE.builder is not None:
            return self._rate_when_run()
        return self._rate()

    def _rate(self) -> float:
        lr = self._learning_rate
        return lr() if isinstance(lr, LRScheduler) else float(lr)

    def _rate_when_run(self):
        """A graph value standing for the Python float `get_lr()` gives when the program runs
        (a float64 persistable tensor kept equal to it)."""
        lr = self._learning_rate
        if isinstance(lr, LRScheduler):
            var = lr.number_var()
        else:
            if self._lr_number is None:
                self._lr_number = Parameter(backend.XP.asarray(float(lr), dtype="float64"),
                                            name=unique_name("learning_rate"), trainable=False)
            var = self._lr_number
        out = assign(var)
        out.stop_gradient = True
        out.python_scalar = True
        return out

    def set_lr(self, value: float) -> None:
        """Set a fixed learning rate (not allowed when a scheduler drives it)."""
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError(  # noqa: TRY004  (Paddle raises RuntimeError here)
                "set_lr: this optimizer's learning rate is an LRScheduler; call the "
                "scheduler's step() instead")
        self._learning_rate = float(value)
        for var, dtype in ((self._lr_var, "float32"), (self._lr_number, "float64")):
            if var is not None:
                var.set_value(backend.XP.asarray(self._learning_rate, dtype=dtype))

    def set_lr_scheduler(self, scheduler: LRScheduler) -> None:
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"set_lr_scheduler: expected an LRScheduler, got "
                            f"{type(scheduler).__name__}")
        self._learning_rate = scheduler

    def _lr_input(self):
        """A Python float for eager updates; a persistable 0-d tensor for a static program, so
        the program reads the rate in force at each run."""
        if STATE.builder is None:
            return self._rate()
        if isinstance(self._learning_rate, LRScheduler):
            return self._learning_rate.var()
        if self._lr_var is None:
            self._lr_var = Parameter(backend.XP.asarray(self._rate(), dtype="float32"),
                                     name=unique_name("learning_rate"), trainable=False)
        return self._lr_var

    # ---- the update loop ------------------------------------------------------------------
    @no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient (call after `loss.backward()`).

        >>> import runtime as rt
        >>> w = rt.Parameter(rt.ones([2]).numpy())
        >>> opt = rt.optimizer.SGD(0.1, parameters=[w])
        >>> w.grad = rt.ones([2])
        >>> opt.step()
        >>> w.numpy().tolist()
        [0.8999999761581421, 0.8999999761581421]
        """
        if STATE.builder is not None:  # a converted training step: update ops in the program
            self._apply_optimize(train_step.grads_for_step(self._parameters()))
            return
        params_grads = [(p, p.grad) for p in self._parameters()
                        if not p.stop_gradient and p.grad is not None]
        self._apply_optimize(params_grads)

    def _apply_optimize(self, params_grads: list, when=None) -> None:
        """Update `params_grads`; `when` (while building: a 0-d bool Variable) keeps the
        updates only on runs where it is true (`GradScaler.step` on inf/nan gradients)."""
        if self._grad_clip is not None and params_grads:
            params_grads = list(self._grad_clip(params_grads))
        lr = self._lr_input()
        for p, g in params_grads:
            if g is not None:
                self._update_param(p, g, lr, when)

    def _update_param(self, p, g, lr, when=None) -> None:
        ratio = (getattr(p, "optimize_attr", None) or {}).get("learning_rate", 1.0)
        if ratio != 1.0:  # ParamAttr(learning_rate=...) scales this parameter's rate
            lr = lr * ratio
        state = self._state_of(p)
        master = state.get("fp32_master")
        weights = master if master is not None else p
        l1 = self._regularizer(p)
        if isinstance(l1, L1Decay) and l1.coeff:  # the update ops know only L2 decay
            g = g + sign(weights) * l1.coeff
        new_p, new_state = self._update(weights, g, lr, state)
        if STATE.builder is not None:  # a converted step: the run decides whether p has a
            # gradient (read only under a tensor `if`)
            present = train_step.has_grad_now(p)
            if when is not None:
                present = when if present is None else logical_and(present, when)
            if present is not None:  # eager skips a parameter whose .grad is None
                new_p = where(present, new_p, weights)
                new_state = {k: where(present, v, state[k]) for k, v in new_state.items()}
            if p.name not in self._updated and not train_step.note_update(self, p.name,
                                                                          present):
                self._note_update(p.name)  # (a static program's state: there once built)
        else:
            self._note_update(p.name)
        for key, value in new_state.items():
            state[key].set_value(value)
        if master is not None:
            master.set_value(new_p)
        p.set_value(new_p)  # casts to a low-precision parameter's dtype

    def _update(self, param, grad, lr, state: dict):
        raise NotImplementedError

    def _note_update(self, name: str) -> None:
        self._updated.setdefault(name)

    def _regularizer(self, param):
        """`param`'s own regularizer (ParamAttr) wins over the optimizer's `weight_decay`."""
        own = getattr(param, "regularizer", None)
        return own if own is not None else self._weight_decay

    def _decay(self, param) -> float:
        """L2 coefficient for `param` (the update ops add `coeff * param` themselves)."""
        return l2_coeff(self._regularizer(param))

    def _parameters(self) -> list:
        if self._parameter_list is None:
            raise ValueError(f"{type(self).__name__}: no parameters; pass parameters=... or "
                             "use minimize(loss) inside a static program")
        return self._parameter_list

    # ---- state ----------------------------------------------------------------------------
    def _state_of(self, p) -> dict:
        state = self._accumulators.get(p.name)
        if state is not None:
            return state
        state = {}
        master = self._multi_precision and str(p.dtype.name) in _LOW_PRECISION
        if master:
            state["fp32_master"] = self._new_state(p, "fp32_master",
                                                   backend.XP.asarray(p._data, "float32"))
        dtype = "float32" if master else p.dtype.np
        for key, init in self._states:
            value = (backend.XP.zeros(p.shape, dtype) if init is None
                     else backend.XP.asarray(init, dtype="float32"))
            state[key] = self._new_state(p, key, value)
        self._accumulators[p.name] = state
        return state

    def _seed_master_weight(self, p, value) -> None:
        """Start `p`'s float32 master weight from `value` (its float32 values before AMP O2
        cast it) instead of from the rounded low-precision parameter."""
        self._loaded.setdefault(f"{p.name}_fp32_master_0", value)

    def _new_state(self, p, key: str, value) -> Parameter:
        name = f"{p.name}_{key}_0"
        loaded = self._loaded.pop(name, None)
        if loaded is not None:
            loaded = loaded._data if isinstance(loaded, Tensor) else backend.XP.asarray(loaded)
            if tuple(loaded.shape) != tuple(value.shape):
                raise ValueError(f"set_state_dict: {name} has shape {list(loaded.shape)} but "
                                 f"the optimizer expects {list(value.shape)}")
            value = loaded.astype(value.dtype)
        return Parameter(value, name=name, trainable=False)

    def state_dict(self) -> dict:
        """Optimizer state by Paddle's key names (`<param>_<state>_0`), plus `LR_Scheduler`.

        >>> import runtime as rt
        >>> w = rt.Parameter(rt.ones([2]).numpy(), name="w")
        >>> opt = rt.optimizer.Adam(parameters=[w])
        >>> w.grad = rt.ones([2]); opt.step()
        >>> sorted(opt.state_dict())[:2]
        ['w_beta1_pow_acc_0', 'w_beta2_pow_acc_0']
        """
        out = {t.name: t for name in self._updated if name in self._accumulators
               for t in self._accumulators[name].values()}
        if isinstance(self._learning_rate, LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict: dict) -> None:
        """Load state saved by `state_dict()`; state of parameters not yet updated is kept
        until their first step."""
        state_dict = dict(state_dict)
        sched = state_dict.pop("LR_Scheduler", None)
        if sched is not None and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(sched)
        current = {t.name: t for state in self._accumulators.values() for t in state.values()}
        for key, value in state_dict.items():
            if key in current:
                data = value._data if isinstance(value, Tensor) else backend.XP.asarray(value)
                current[key].set_value(data)
            else:
                self._loaded[key] = value

    set_dict = set_state_dict

    # ---- gradients ------------------------------------------------------------------------
    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Reset the gradients of the parameters: to zeros (Paddle's default) or to None."""
        if STATE.builder is not None:  # a converted training step: eager's rule, at run time
            train_step.clear_grads(self._parameters(), set_to_zero)
            return
        for p in self._parameters():
            if p.grad is None:
                continue
            if set_to_zero:
                p.grad = Tensor(backend.XP.zeros_like(p.grad._data))
            else:
                p.clear_grad()

    clear_gradients = clear_grad

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Eager mode: apply the gradients already computed by `loss.backward()` (as Paddle
        does). Static mode: append the backward pass and the update ops to the program.
        Returns (None, [(param, grad), ...])."""
        params = parameters if parameters is not None else self._parameter_list
        if STATE.builder is not None and STATE.builder.program.from_eager_code:  # (a
            # converted training step: as eager code, the `.grad`s backward() left)
            params_grads = train_step.grads_for_step(self._parameters() if params is None
                                                     else list(params))
            self._apply_optimize(params_grads)
            return None, params_grads
        if STATE.builder is None:
            params = self._parameters() if params is None else list(params)
            params_grads = [(p, p.grad) for p in params
                            if not p.stop_gradient and p.grad is not None]
            with no_grad():
                self._apply_optimize(params_grads)
            return None, params_grads
        params_grads = static.append_backward(loss, parameter_list=params,
                                              no_grad_set=no_grad_set)
        self._apply_optimize(params_grads)
        return None, params_grads

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self._rate()})"


def _check_unique_names(params: list, who: str) -> None:
    """State is keyed by parameter name (as in Paddle's checkpoints), so two different
    parameters under one name would silently share moments."""
    seen: dict = {}
    for p in params:
        other = seen.setdefault(p.name, p)
        if other is not p:
            raise ValueError(f"{who}: two different parameters are both named {p.name!r}; "
                             "optimizer state is keyed by name, so give them distinct names")
