"""`GradScaler` inside a converted training step: the scaler's state as persistable 0-d
tensors that the program reads and writes, so every run of one program scales, skips and
adapts as eager calls do.

Eager code decides in Python: skip the optimizer step when a gradient is inf/nan, shrink or
grow the scale after so many such steps. A program cannot branch in Python on a value it
computes, so while one is built the scaler's fields (`_scale`, the counters, the ratios,
`_found_inf`) become persistable tensors (`state`), created once from the Python values and
from then on the one copy eager code reads too (`grad_scaler._Field`). The step is the
optimizer's update kept only where no gradient was inf/nan (`Optimizer._apply_optimize`'s
`when`), and `update()` is the same arithmetic as `GradScaler._update_scale`, written with
`where`.
"""
from __future__ import annotations

from .. import backend
from ..ops.creation import full
from ..ops.logic import equal, isfinite, logical_and, logical_not, where
from ..ops.math import cast
from ..ops.optim import check_finite_and_unscale
from ..ops.registry import STATE
from ..parameter import Parameter, unique_name
from ..program import train_step

# the fields a run reads or writes, with the dtype of the tensor that holds each
FIELDS = {
    "_scale": "float64", "_incr_ratio": "float64", "_decr_ratio": "float64",
    "_incr_every_n_steps": "int64", "_decr_every_n_nan_or_inf": "int64",
    "_incr_count": "int64", "_decr_count": "int64", "_found_inf": "bool", "_unscaled": "bool",
}


def building() -> bool:
    """Whether a program is being built (the scaler's methods then append ops)."""
    return STATE.builder is not None


def state(scaler) -> dict:
    """`field -> Parameter` of `scaler`, made from its Python values at the first use."""
    held = scaler.__dict__.get("_vars")
    if held is None:
        held = {name: Parameter(backend.XP.asarray(scaler.__dict__[name], dtype=dtype),
                                name=unique_name(f"loss_scaler{name}"), trainable=False)
                for name, dtype in FIELDS.items()}
        scaler.__dict__["_vars"] = held
    return held


def scaled(scaler, var):
    """`var * scale`, the scale read when the program runs."""
    return var * cast(state(scaler)["_scale"], var.dtype)


def loss_scaling(scaler):
    """`get_loss_scaling()`: the scale when the program runs, float32."""
    return cast(state(scaler)["_scale"], "float32")


def _found_by_program() -> dict:
    """`id(scaler) -> found_inf Variable` of the program being built (kept on the program,
    not on the scaler: nothing the caller reaches may hold a Variable after the call)."""
    return STATE.builder.program.__dict__.setdefault("_loss_scaler_found", {})


def unscale(scaler, optimizer) -> None:
    """Divide the optimizer's gradients by the scale; record whether any is inf/nan."""
    st = state(scaler)
    params_grads = train_step.grads_for_step(optimizer._parameters())
    if params_grads:
        grads, found = check_finite_and_unscale([g for _, g in params_grads], st["_scale"])
        for (p, _), g in zip(params_grads, grads):
            train_step.set_grad(p, g)
    else:
        found = full([], False, "bool")
    st["_found_inf"].set_value(found)
    _found_by_program()[id(scaler)] = found


def _found(scaler):
    found = _found_by_program().get(id(scaler))
    return found if found is not None else cast(state(scaler)["_found_inf"], "bool")


def step(scaler, optimizer) -> None:
    """`optimizer.step()` whose writes are kept only where no gradient was inf/nan."""
    keep = logical_not(_found(scaler))
    optimizer._apply_optimize(train_step.grads_for_step(optimizer._parameters()), when=keep)


def update(scaler) -> None:
    """`GradScaler._update_scale` on the run's values."""
    st = state(scaler)
    found = _found(scaler)
    scale = st["_scale"]
    decr = st["_decr_count"] + 1
    shrink = logical_and(found, equal(decr, st["_decr_every_n_nan_or_inf"]))
    incr = st["_incr_count"] + 1
    grow = logical_and(logical_not(found), equal(incr, st["_incr_every_n_steps"]))
    smaller = scale * st["_decr_ratio"]
    smaller = where(smaller < 1.0, smaller * 0.0 + 1.0, smaller)
    grown = scale * st["_incr_ratio"]
    grows = logical_and(grow, isfinite(cast(grown, "float32")))
    zero = incr * 0
    new_scale = where(shrink, smaller, where(grows, grown, scale))
    new_decr = where(found, where(shrink, zero, decr), zero)
    new_incr = where(found, zero, where(grow, zero, incr))
    st["_scale"].set_value(new_scale)
    st["_decr_count"].set_value(new_decr)
    st["_incr_count"].set_value(new_incr)
    _found_by_program().pop(id(scaler), None)
