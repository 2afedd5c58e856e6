"""`GradScaler`: dynamic loss scaling for float16 training (Paddle 2.x semantics).

Float16 gradients underflow to zero below ~6e-8. Multiplying the loss by a large scale before
`backward()` keeps them representable; the gradients are divided by the same scale before the
update. If any gradient is inf/nan the scale was too large: that step is skipped and, after
`decr_every_n_nan_or_inf` such steps, the scale shrinks; after `incr_every_n_steps` clean
steps it grows again.

The unscale-and-check is one registered op (`check_finite_and_unscale`), applied to every
gradient of the optimizer's parameters at once.
"""
from __future__ import annotations

import math

import numpy as np

from .. import core
from ..ops.math import cast
from ..ops.optim import check_finite_and_unscale
from ..tensor import to_tensor
from . import scaler_program as program

_UNSCALED, _STEPPED = "unscaled", "stepped"
_KINDS = {"float64": float, "int64": int, "bool": bool}


class _Field:
    """A field of the scaler's state: a Python value in the instance's `__dict__` until a
    converted step uses the scaler, then the persistable tensor its programs read and write
    (`scaler_program.state`), so eager code and every run see one value."""

    def __set_name__(self, owner, name: str) -> None:
        self.name, self.kind = name, _KINDS[program.FIELDS[name]]

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        var = obj.__dict__.get("_vars", {}).get(self.name)
        return obj.__dict__[self.name] if var is None else self.kind(var.numpy())

    def __set__(self, obj, value) -> None:
        value = obj.__dict__[self.name] = self.kind(value)
        var = obj.__dict__.get("_vars", {}).get(self.name)
        if var is not None:
            var.set_value(np.asarray(value, dtype=program.FIELDS[self.name]))


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps with inf/nan, adapt the scale.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.SGD(0.1, parameters=[w])
    >>> scaler = rt.amp.GradScaler(init_loss_scaling=1024)
    >>> with rt.amp.auto_cast():
    ...     loss = (w * w).sum()
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> opt.clear_grad()
    """

    _scale, _incr_ratio, _decr_ratio = _Field(), _Field(), _Field()
    _incr_every_n_steps, _decr_every_n_nan_or_inf = _Field(), _Field()
    _incr_count, _decr_count, _found_inf = _Field(), _Field(), _Field()
    _unscaled = _Field()  # (unscale_() ran since the last update(): eagerly or in a run)

    # Paddle 3.3.1's GradScaler defaults: scale 2**16, doubled after 2000 clean steps, halved
    # after every step with inf/nan (AmpScaler, Paddle's older class, starts at 2**15 and
    # grows after 1000 steps).
    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 16,
                 incr_ratio: float = 2.0, decr_ratio: float = 0.5,
                 incr_every_n_steps: int = 2000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True):
        if incr_ratio <= 1.0:
            raise ValueError(f"GradScaler: incr_ratio must be > 1.0, got {incr_ratio}")
        if not 0.0 < decr_ratio < 1.0:
            raise ValueError(f"GradScaler: decr_ratio must be in (0, 1), got {decr_ratio}")
        if init_loss_scaling <= 0:
            raise ValueError(f"GradScaler: init_loss_scaling must be positive, got "
                             f"{init_loss_scaling}")
        self._enable = bool(enable)
        self._init_loss_scaling = float(init_loss_scaling)
        self._scale = float(init_loss_scaling)
        self._incr_ratio, self._decr_ratio = float(incr_ratio), float(decr_ratio)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._incr_count = 0
        self._decr_count = 0
        self._found_inf = False
        self._unscaled = False
        self._opt_states: dict = {}

    # ---- the training-step API ------------------------------------------------------------
    def scale(self, var):
        """`var * scale` (computed in float32: a float16 loss times 2**15 would overflow)."""
        if not self._enabled():
            return var
        if var.dtype != "float32" and var.dtype != "float64":
            var = cast(var, "float32")
        if program.building():
            return program.scaled(self, var)
        return var * self._scale

    def unscale_(self, optimizer) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale now (e.g. before
        clipping them by hand) and record whether any is inf/nan."""
        if not self._enabled():
            return
        state = self._state_of(optimizer)
        if state == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update()")
        if state == _STEPPED:
            raise RuntimeError("unscale_() is being called after step(); call update() first")
        self._opt_states[id(optimizer)] = _UNSCALED
        if program.building():
            program.unscale(self, optimizer)
            self._unscaled = True  # (a write of its tensor: every run sets it)
            return
        self._unscaled = True
        params = [p for p in optimizer._parameters() if p.grad is not None]
        found = False
        if params:
            grads, found_inf = check_finite_and_unscale([p.grad for p in params], self._scale)
            for p, g in zip(params, grads):
                p.grad = g
            found = bool(found_inf)
        self._found_inf = found

    def step(self, optimizer) -> None:
        """Unscale (unless done already) and call `optimizer.step()` unless a gradient is
        inf/nan. Call `update()` afterwards."""
        if not self._enabled():
            optimizer.step()
            return
        if self._opt_states.get(id(optimizer)) == _STEPPED:
            raise RuntimeError("step() has already been called since the last update()")
        if self._state_of(optimizer) != _UNSCALED:
            self.unscale_(optimizer)
        if program.building():
            program.step(self, optimizer)
        elif not self._found_inf:
            optimizer.step()
        self._opt_states[id(optimizer)] = _STEPPED

    def update(self) -> None:
        """Adapt the scale to this step's outcome (with dynamic loss scaling) and reset."""
        if not self._enabled():
            return
        if not program.building():
            if self._use_dynamic_loss_scaling:
                self._update_scale()
        elif core.setting_read(self, "_use_dynamic_loss_scaling"):
            program.update(self)
        self._opt_states.clear()
        self._unscaled = False

    def minimize(self, optimizer, *args, **kwargs):
        """`step` then `update` in one call; `args` go to `optimizer.minimize`."""
        if not self._enabled():
            return optimizer.minimize(*args, **kwargs)
        if program.building():
            self.step(optimizer)
            self.update()
            return None
        if self._state_of(optimizer) != _UNSCALED:
            self.unscale_(optimizer)
        out = None if self._found_inf else optimizer.minimize(*args, **kwargs)
        self.update()
        return out

    def _enabled(self) -> bool:
        """`_enable`; while a program is built, a setting it depends on (changing it between
        calls of a converted step traces a new program, as eager code reads it anew)."""
        return core.setting_read(self, "_enable") if program.building() else self._enable

    def _state_of(self, optimizer):
        """`_UNSCALED`, `_STEPPED` or None since the last update(); unscaled also where a
        converted function's run did it (its Python ran once, while tracing)."""
        state = self._opt_states.get(id(optimizer))
        if state is None and not program.building() and self._unscaled:
            return _UNSCALED
        return state

    def _update_scale(self) -> None:
        if self._found_inf:
            self._incr_count = 0
            self._decr_count += 1
            if self._decr_count == self._decr_every_n_nan_or_inf:
                self._scale = max(self._scale * self._decr_ratio, 1.0)
                self._decr_count = 0
        else:
            self._decr_count = 0
            self._incr_count += 1
            if self._incr_count == self._incr_every_n_steps:
                grown = self._scale * self._incr_ratio
                if math.isfinite(float(np.float32(grown))):
                    self._scale = grown
                self._incr_count = 0

    # ---- inspection and checkpoints -------------------------------------------------------
    def is_enable(self) -> bool:
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        return self._use_dynamic_loss_scaling

    def get_loss_scaling(self):
        """The current scale as a float32 0-d Tensor."""
        if program.building():
            return program.loss_scaling(self)
        return to_tensor(np.float32(self._scale))

    def get_init_loss_scaling(self) -> float:
        return self._init_loss_scaling

    def set_init_loss_scaling(self, value: float) -> None:
        self._init_loss_scaling = float(value)
        self._scale = float(value)

    # Paddle's getters and setters of the scaling schedule
    def get_incr_ratio(self) -> float:
        return self._incr_ratio

    def set_incr_ratio(self, value: float) -> None:
        if value <= 1.0:
            raise ValueError(f"GradScaler: incr_ratio must be > 1.0, got {value}")
        self._incr_ratio = float(value)

    def get_decr_ratio(self) -> float:
        return self._decr_ratio

    def set_decr_ratio(self, value: float) -> None:
        if not 0.0 < value < 1.0:
            raise ValueError(f"GradScaler: decr_ratio must be in (0, 1), got {value}")
        self._decr_ratio = float(value)

    def get_incr_every_n_steps(self) -> int:
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, value: int) -> None:
        self._incr_every_n_steps = int(value)

    def get_decr_every_n_nan_or_inf(self) -> int:
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, value: int) -> None:
        self._decr_every_n_nan_or_inf = int(value)

    def state_dict(self) -> dict:
        """The scale and counters (empty when disabled), for checkpoints."""
        if not self._enabled():
            return {}
        return {"scale": np.float32(self._scale), "incr_ratio": self._incr_ratio,
                "decr_ratio": self._decr_ratio, "incr_every_n_steps": self._incr_every_n_steps,
                "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
                "incr_count": self._incr_count, "decr_count": self._decr_count,
                "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled():
            return
        if not state_dict:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty (it was "
                               "saved from a disabled GradScaler)")
        self._scale = float(np.asarray(state_dict["scale"]).reshape(()))
        self._incr_ratio = float(state_dict["incr_ratio"])
        self._decr_ratio = float(state_dict["decr_ratio"])
        self._incr_every_n_steps = int(state_dict["incr_every_n_steps"])
        self._decr_every_n_nan_or_inf = int(state_dict["decr_every_n_nan_or_inf"])
        self._incr_count = int(state_dict["incr_count"])
        self._decr_count = int(state_dict["decr_count"])
        self._use_dynamic_loss_scaling = bool(state_dict["use_dynamic_loss_scaling"])

    set_state_dict = load_state_dict


class AmpScaler(GradScaler):
    """Paddle's `AmpScaler`: a GradScaler with its older defaults (2**15, 1000 steps)."""

    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 15,
                 incr_ratio: float = 2.0, decr_ratio: float = 0.5,
                 incr_every_n_steps: int = 1000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True):
        super().__init__(enable, init_loss_scaling, incr_ratio, decr_ratio, incr_every_n_steps,
                         decr_every_n_nan_or_inf, use_dynamic_loss_scaling)

__all__ = ["AmpScaler", "GradScaler"]

