"""Optimizer update rules as ops, so one definition serves eager `.step()` and static programs.

Every op here is `nondiff` (an update is never differentiated) and `amp='keep'` (auto_cast must
not touch optimizer state). Each takes the parameter, its gradient, the learning rate (a Python
float in eager mode, a 0-d persistable tensor in static programs so that schedulers take effect
without rebuilding) and the optimizer's state, and returns the new parameter and new state.
The optimizer writes them back with `Tensor.set_value`.

Dtypes: the gradient is brought to the parameter's dtype (a float16 gradient updating a float32
master weight under AMP O2). Scalars computed from state (bias corrections) are cast to the
parameter's dtype too, so outputs have exactly the input dtypes.

`weight_decay` (L2, added to the gradient) is an attr of the SGD, Momentum, Adam and RMSProp
updates; AdamW decays the parameter itself (decoupled) with `coeff`.
"""
from __future__ import annotations

from ..dtypes import bool_
from . import infer as I
from .registry import Meta, OpError, OpTypeError, bind, register

_PY = (int, float)


def _as(x, dtype):
    """A Python scalar stays one; an array (a 0-d learning rate, a beta power) takes `dtype`."""
    return x if x.__class__ in _PY else x.astype(dtype, copy=False)


def _grad(p, g, l2):
    g = g.astype(p.dtype, copy=False)
    return g + l2 * p if l2 else g


def _check(op: str, param, grad):
    I.check_tensor(op, "param", param)
    I.check_tensor(op, "grad", grad)
    if not param.dtype.is_floating:
        raise OpTypeError(f"{op}: param has dtype {param.dtype.name}; only floating-point "
                          "parameters can be updated")
    if tuple(param.shape) != tuple(grad.shape) and -1 not in param.shape + grad.shape:
        raise OpError(f"{op}: param has shape {I.fmt(param.shape)} but grad has shape "
                        f"{I.fmt(grad.shape)}")


def _like(*metas):
    return tuple(Meta(m.shape, m.dtype) for m in metas)


# ---- SGD ------------------------------------------------------------------------------------

def _sgd_kernel(xp, p, g, lr, weight_decay=0.0):
    return p - _as(lr, p.dtype) * _grad(p, g, weight_decay)


def _sgd_infer(p, g, lr, weight_decay=0.0):
    _check("sgd_update", p, g)
    return Meta(p.shape, p.dtype)


SGD_UPDATE = register("sgd_update", kernel=_sgd_kernel, infer=_sgd_infer, amp="keep",
                      nondiff=True, doc="param - lr * (grad + weight_decay * param)")


def sgd_update(param, grad, learning_rate, weight_decay: float = 0.0):
    """One SGD step; returns the new parameter value."""
    return bind(SGD_UPDATE, (param, grad, learning_rate), _l2(weight_decay))


# ---- Momentum -------------------------------------------------------------------------------

def _momentum_kernel(xp, p, g, v, lr, mu=0.9, use_nesterov=False, weight_decay=0.0):
    g = _grad(p, g, weight_decay)
    lr = _as(lr, p.dtype)
    v = mu * v + g
    step = g + mu * v if use_nesterov else v
    return p - lr * step, v


def _momentum_infer(p, g, v, lr, **_):
    _check("momentum_update", p, g)
    return _like(p, v)


MOMENTUM_UPDATE = register(
    "momentum_update", kernel=_momentum_kernel, infer=_momentum_infer, amp="keep", nondiff=True,
    doc="velocity = mu * velocity + grad; param -= lr * velocity (Nesterov: grad + mu * v)")


def momentum_update(param, grad, velocity, learning_rate, momentum: float = 0.9,
                    use_nesterov: bool = False, weight_decay: float = 0.0):
    """One Momentum step; returns (param, velocity)."""
    attrs = {"mu": float(momentum), **_l2(weight_decay)}
    if use_nesterov:
        attrs["use_nesterov"] = True
    return bind(MOMENTUM_UPDATE, (param, grad, velocity, learning_rate), attrs)


# ---- Adam and AdamW -------------------------------------------------------------------------

def _adam_step(xp, p, g, lr, m1, m2, b1p, b2p, beta1, beta2, epsilon):
    # In-place arithmetic only on fresh temporaries (never on the inputs): about a third
    # fewer allocations on the eager hot path.
    m1 = m1 * beta1
    m1 += (1.0 - beta1) * g
    m2 = m2 * beta2
    m2 += (1.0 - beta2) * (g * g)
    # Paddle's form: the bias corrections fold into the step size and the epsilon
    corr2 = xp.sqrt(1.0 - b2p)  # stays on the device: no host sync per parameter
    lr_t = _as(lr * corr2 / (1.0 - b1p), p.dtype)
    step = xp.sqrt(m2)
    step += _as(epsilon * corr2, p.dtype)
    xp.divide(m1, step, out=step)
    step *= lr_t
    return p - step, m1, m2, b1p * beta1, b2p * beta2


def _adam_kernel(xp, p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 weight_decay=0.0):
    g = _grad(p, g, weight_decay)
    return _adam_step(xp, p, g, lr, m1, m2, b1p, b2p, beta1, beta2, epsilon)


def _adamw_kernel(xp, p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-8,
                  coeff=0.01, lr_ratio=1.0):
    lr = lr * lr_ratio
    p = p * _as(1.0 - lr * coeff, p.dtype)
    return _adam_step(xp, p, g.astype(p.dtype, copy=False), lr, m1, m2, b1p, b2p,
                      beta1, beta2, epsilon)


def _adam_infer(name):
    def rule(p, g, lr, m1, m2, b1p, b2p, **_):
        _check(name, p, g)
        return _like(p, m1, m2, b1p, b2p)
    return rule


ADAM_UPDATE = register(
    "adam_update", kernel=_adam_kernel, infer=_adam_infer("adam_update"), amp="keep",
    nondiff=True, doc="Adam with bias corrections carried as beta powers (Paddle's adam op)")
ADAMW_UPDATE = register(
    "adamw_update", kernel=_adamw_kernel, infer=_adam_infer("adamw_update"), amp="keep",
    nondiff=True, doc="param *= 1 - lr * coeff, then the Adam step (decoupled weight decay)")


def adam_update(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                weight_decay: float = 0.0):
    """One Adam step; returns (param, moment1, moment2, beta1_pow, beta2_pow)."""
    attrs = {"beta1": float(beta1), "beta2": float(beta2), "epsilon": float(epsilon),
             **_l2(weight_decay)}
    return bind(ADAM_UPDATE, (param, grad, learning_rate, moment1, moment2, beta1_pow,
                              beta2_pow), attrs)


def adamw_update(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                 beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                 coeff: float = 0.01, lr_ratio: float = 1.0):
    """One AdamW step; returns (param, moment1, moment2, beta1_pow, beta2_pow)."""
    attrs = {"beta1": float(beta1), "beta2": float(beta2), "epsilon": float(epsilon),
             "coeff": float(coeff)}
    if lr_ratio != 1.0:
        attrs["lr_ratio"] = float(lr_ratio)
    return bind(ADAMW_UPDATE, (param, grad, learning_rate, moment1, moment2, beta1_pow,
                               beta2_pow), attrs)


# ---- RMSProp --------------------------------------------------------------------------------

def _rmsprop_kernel(xp, p, g, lr, ms, mg, mom, rho=0.95, epsilon=1e-6, momentum=0.0,
                    centered=False, weight_decay=0.0):
    g = _grad(p, g, weight_decay)
    ms = rho * ms + (1.0 - rho) * (g * g)
    if centered:
        mg = rho * mg + (1.0 - rho) * g
        denom = xp.sqrt(ms - mg * mg + epsilon)
    else:
        denom = xp.sqrt(ms + epsilon)
    mom = momentum * mom + _as(lr, p.dtype) * g / denom
    return p - mom, ms, mg, mom


def _rmsprop_infer(p, g, lr, ms, mg, mom, **_):
    _check("rmsprop_update", p, g)
    return _like(p, ms, mg, mom)


RMSPROP_UPDATE = register(
    "rmsprop_update", kernel=_rmsprop_kernel, infer=_rmsprop_infer, amp="keep", nondiff=True,
    doc="RMSProp (optionally centered, with momentum), Paddle's rmsprop op")


def rmsprop_update(param, grad, learning_rate, mean_square, mean_grad, moment,
                   rho: float = 0.95, epsilon: float = 1e-6, momentum: float = 0.0,
                   centered: bool = False, weight_decay: float = 0.0):
    """One RMSProp step; returns (param, mean_square, mean_grad, moment)."""
    attrs = {"rho": float(rho), "epsilon": float(epsilon), "momentum": float(momentum),
             **_l2(weight_decay)}
    if centered:
        attrs["centered"] = True
    return bind(RMSPROP_UPDATE, (param, grad, learning_rate, mean_square, mean_grad, moment),
                attrs)


# ---- loss scaling (AMP) ---------------------------------------------------------------------

def _unscale_kernel(xp, xs, scale):
    inv = 1.0 / scale
    outs = tuple(x * _as(inv, x.dtype) for x in xs)
    finite = xp.asarray(True)
    for x in xs:  # combined on the device: one host sync per step (GradScaler), not one per grad
        finite = finite & xp.isfinite(x).all()
    return (*outs, xp.asarray(~finite))


def _unscale_infer(xs, scale):
    for i, x in enumerate(xs):
        I.check_tensor("check_finite_and_unscale", f"xs[{i}]", x)
    return (*_like(*xs), Meta((), bool_))


CHECK_FINITE_AND_UNSCALE = register(
    "check_finite_and_unscale", kernel=_unscale_kernel, infer=_unscale_infer, amp="keep",
    nondiff=True, doc="Divide every gradient by the loss scale; also say if any was inf/nan")


def check_finite_and_unscale(xs: list, scale) -> tuple:
    """Returns (list of xs / scale, found_inf as a 0-d bool tensor)."""
    out = bind(CHECK_FINITE_AND_UNSCALE, (list(xs), scale), {})
    return list(out[:-1]), out[-1]


def _l2(weight_decay) -> dict:
    return {"weight_decay": float(weight_decay)} if weight_decay else {}


METHODS: dict = {}

__all__: list = []
