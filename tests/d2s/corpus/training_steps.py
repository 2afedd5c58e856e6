"""The registry and the comparison of the training-step corpora (`cases_wild5_training.py`,
`cases_wild7_training.py`; a case is named by its module, as corpus cases are).

A plain corpus case must give the same result when called twice; a training step does not:
each call changes parameters, optimizer state and the user's objects. A training case is a
step function and a `setup()` that builds what the step is given before the inputs (model,
optimizer, scheduler, metric objects), from one seed; `between` runs after every call,
eagerly in both modes (a scheduler's `step()` outside the step, as epoch loops do):

    @train_case(setup=lambda: (MLP(), sgd(...)), args=[(x0, y0), (x1, y1), ...])
    def sgd_step(model, opt, x, y): ...

`test_training_steps.py` builds the objects twice, runs the step eagerly on one set and
converted (one `d2s.to_static`) on the other, argument set after argument set in order, and
after every call compares all a user observes: the result (Python types exactly, tensors'
dtype, shape, stop_gradient and values), every parameter and buffer, `stop_gradient` and
whether `.grad` is None (and its value), the optimizer's state and rate, a scheduler's
epoch and rate, and every field of the other objects. The argument sets must take different
paths through the one program; NumPy arrays become fresh tensors on every call.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

import runtime as rt


@dataclasses.dataclass
class TrainCase:
    name: str
    fn: Callable
    setup: Callable
    args: list
    rtol: float = 1e-5
    atol: float = 1e-6
    between: Callable | None = None  # called with the objects after every call (both modes)

    def __repr__(self):
        return f"<training case {self.name}>"


TRAIN_CASES: list[TrainCase] = []


def train_case(setup: Callable, args: list, *, rtol: float = 1e-5, atol: float = 1e-6,
               between: Callable | None = None) -> Callable:
    """Register the decorated step function as a training case."""
    def register(fn):
        name = f"{fn.__module__.rsplit('.', 1)[-1].removeprefix('cases_')}.{fn.__name__}"
        if any(c.name == name for c in TRAIN_CASES):
            raise ValueError(f"training case {name} is defined twice")
        TRAIN_CASES.append(TrainCase(name, fn, setup, [tuple(a) for a in args], rtol, atol,
                                     between))
        return fn
    return register


# ---- comparing what a user observes -------------------------------------------------------
def same(expected, got, where: str, rtol: float, atol: float) -> None:
    """`got` is `expected` as a user sees it: the same Python type at every leaf."""
    assert type(got) is type(expected), (
        f"{where}: {type(expected).__name__} eagerly, {type(got).__name__} converted")
    if isinstance(expected, rt.Tensor):
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
        assert got.stop_gradient == expected.stop_gradient, f"{where}: stop_gradient"
        _values(expected.numpy(), got.numpy(), where, rtol, atol)
    elif isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape, where
        _values(expected, got, where, rtol, atol)
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), f"{where}: length {len(got)} != {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            same(e, g, f"{where}[{i}]", rtol, atol)
    elif isinstance(expected, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for k in expected:
            same(expected[k], got[k], f"{where}[{k!r}]", rtol, atol)
    elif isinstance(expected, float):
        _values(np.float64(expected), np.float64(got), where, rtol, atol)
    elif isinstance(expected, (bool, int, str, type(None), np.generic)):
        assert got == expected, f"{where}: {got!r} != {expected!r}"
    else:
        same_object(expected, got, where, rtol, atol)


def _values(e, g, where, rtol, atol) -> None:
    if e.dtype.kind in "biu":
        np.testing.assert_array_equal(g, e, err_msg=where)
    else:
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=where, equal_nan=True)


def same_object(expected, got, where: str, rtol: float, atol: float) -> None:
    """Layers, optimizers, schedulers and user objects, by what their users read."""
    if isinstance(expected, rt.nn.Layer):
        assert got.training == expected.training, f"{where}: training"
        same(list(expected.state_dict().values()), list(got.state_dict().values()),
             f"{where}.state_dict()", rtol, atol)
        for i, (p, q) in enumerate(zip(expected.parameters(), got.parameters(), strict=True)):
            at = f"{where}.parameters()[{i}]"
            assert p.stop_gradient == q.stop_gradient, f"{at}.stop_gradient"
            assert (p.grad is None) == (q.grad is None), (
                f"{at}.grad is {'None' if p.grad is None else 'a tensor'} eagerly, "
                f"{'None' if q.grad is None else 'a tensor'} converted")
            if p.grad is not None:
                same(p.grad, q.grad, f"{at}.grad", rtol, atol)
    elif isinstance(expected, rt.optimizer.Optimizer):
        same(expected.get_lr(), got.get_lr(), f"{where}.get_lr()", rtol, atol)
        s1, s2 = expected.state_dict(), got.state_dict()
        assert len(s1) == len(s2), f"{where}.state_dict(): {len(s1)} != {len(s2)} entries"
        same(list(s1.values()), list(s2.values()), f"{where}.state_dict()", rtol, atol)
    elif isinstance(expected, rt.optimizer.lr.LRScheduler):
        assert (got.last_epoch, got.last_lr) == (expected.last_epoch, expected.last_lr), where
    elif isinstance(expected, rt.amp.GradScaler):
        same(expected.state_dict(), got.state_dict(), f"{where}.state_dict()", rtol, atol)
    elif hasattr(expected, "__dict__"):
        fields = {k: v for k, v in vars(expected).items() if not k.startswith("_")}
        other = {k: v for k, v in vars(got).items() if not k.startswith("_")}
        same(fields, other, where, rtol, atol)
    else:
        raise TypeError(f"{where}: cannot compare {type(expected).__name__}")
