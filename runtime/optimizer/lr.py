"""Learning-rate schedulers (`rt.optimizer.lr`), following Paddle 2.x.

A scheduler is a number that changes when `.step()` is called (once per epoch or per batch, as
the user decides). Pass one as an optimizer's `learning_rate`; the optimizer reads `sched()`
on every update. Static programs read the learning rate from a persistable 0-d tensor that the
scheduler keeps up to date (`var()`), so a program built once follows the schedule.

>>> import runtime as rt
>>> sched = rt.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5)
>>> rates = []
>>> for epoch in range(5):
...     rates.append(sched())
...     sched.step()
>>> rates
[0.1, 0.1, 0.05, 0.05, 0.025]
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .. import backend
from ..dtypes import float32, float64
from ..ops import registry
from ..ops.registry import STATE, Meta, bind
from ..parameter import Parameter, unique_name
from ..program import origin


class LRScheduler:
    """Base class: subclasses implement `get_lr()` from `self.base_lr` and `self.last_epoch`.

    Construction performs the first `step()`, so `last_epoch` is 0 and `last_lr` is the
    initial rate, as in Paddle.
    """

    keys = ("last_epoch", "last_lr")
    _stepped_in = None  # (the id of a program being built that steps it)

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose: bool = False):
        if not isinstance(learning_rate, (int, float)):
            raise TypeError(f"{type(self).__name__}: learning_rate must be a float, got "
                            f"{type(learning_rate).__name__}")
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var = None
        self._number = None
        self._advance()

    def __call__(self) -> float:
        return self.last_lr

    # (converted code that stepped the schedule reads the rate as `opt.get_lr()`, a value of
    # the run: these Python values would be the ones from before the step)
    @property
    def last_lr(self) -> float:
        self._check_read("last_lr")
        return self._last_lr

    @last_lr.setter
    def last_lr(self, value) -> None:
        self._last_lr = value

    @property
    def last_epoch(self) -> int:
        self._check_read("last_epoch")
        return self._last_epoch

    @last_epoch.setter
    def last_epoch(self, value) -> None:
        self._last_epoch = value

    def _check_read(self, what: str) -> None:
        b = STATE.builder
        if b is not None and self._stepped_in == id(b.program):
            at = origin.capture(3)
            where = f" (at {at[0]}:{at[1]})" if at and at[0] else ""
            raise RuntimeError(
                f"reading {type(self).__name__}.{what}{where} after its step() in a function "
                "converted by d2s.to_static: the step happens when the program runs, and this "
                "Python value is the one from before it. Read the rate as opt.get_lr() (the "
                "rate of the run), or read the scheduler after the call")

    def get_lr(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`) and recompute the learning rate. While a
        program is being built (a converted training step), an op that advances the schedule
        each time the program runs it (under a tensor `if`: on the runs that take it); what
        the program reads of the rate after it is the new rate."""
        if STATE.builder is None:
            self._advance(epoch)
            return
        if epoch is not None and not isinstance(epoch, int):
            at = origin.capture(2)
            where = f" (at {at[0]}:{at[1]})" if at and at[0] else ""
            raise TypeError(
                f"{type(self).__name__}.step(epoch){where} inside a function converted by "
                f"d2s.to_static takes a Python int epoch, got {type(epoch).__name__}; call "
                "step() without an epoch, or outside the converted function")
        held32, held64 = self.var(), self.number_var()
        rate32, rate64 = bind(SCHEDULE_STEP, (ScheduleSlot(self),), {"epoch": epoch})
        held32.set_value(rate32)
        held64.set_value(rate64)
        self._stepped_in = id(STATE.builder.program)

    def _advance(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = float(self.get_lr())
        else:
            self.last_epoch = int(epoch)
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = float(closed() if closed is not None else self.get_lr())
        for var, dtype in ((self._var, "float32"), (self._number, "float64")):
            if var is not None:
                var.set_value(backend.XP.asarray(self.last_lr, dtype=dtype))
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                  f"{self.last_lr}.")

    def var(self) -> Parameter:
        """The persistable float32 0-d tensor holding the current rate (read by programs)."""
        if self._var is None:
            self._var = Parameter(backend.XP.asarray(self.last_lr, dtype="float32"),
                                  name=unique_name("learning_rate"), trainable=False)
        return self._var

    def number_var(self) -> Parameter:
        """The persistable float64 0-d tensor holding the current rate as the Python float
        `sched()` gives, to the last bit (read by converted code: `opt.get_lr()`)."""
        if self._number is None:
            self._number = Parameter(backend.XP.asarray(self.last_lr, dtype="float64"),
                                     name=unique_name("learning_rate"), trainable=False)
        return self._number

    def state_dict(self) -> dict:
        out = {}
        for key in self.keys:
            value = getattr(self, key)
            out[key] = value.state_dict() if isinstance(value, LRScheduler) else value
        return out

    def set_state_dict(self, state: dict) -> None:
        for key in self.keys:
            if key not in state:
                continue
            current = getattr(self, key)
            if isinstance(current, LRScheduler):
                current.set_state_dict(state[key])
            else:
                setattr(self, key, state[key])
        self._advance(self.last_epoch)

    set_dict = set_state_dict


class ScheduleSlot:
    """A scheduler as an op input (a literal): the op advances it when the program runs."""

    __slots__ = ("scheduler",)

    def __init__(self, scheduler: LRScheduler):
        self.scheduler = scheduler

    def __repr__(self):
        return type(self.scheduler).__name__

    def __eq__(self, other):
        return isinstance(other, ScheduleSlot) and other.scheduler is self.scheduler

    def __hash__(self):
        return id(self.scheduler)


def _step_kernel(xp, slot, epoch=None):
    sched = slot.scheduler
    sched._advance(epoch)
    sched._stepped_in = None  # (the program that stepped it is built)
    return (xp.asarray(sched.last_lr, dtype="float32"),
            xp.asarray(sched.last_lr, dtype="float64"))


SCHEDULE_STEP = registry.register(
    "lr_schedule_step", kernel=_step_kernel, nondiff=True, amp="keep",
    infer=lambda *a, **k: (Meta((), float32), Meta((), float64)),
    doc="`scheduler.step(epoch)` when the op runs: the new rate, as float32 and float64.")


class StepDecay(LRScheduler):
    """`lr = base_lr * gamma ** (epoch // step_size)`."""

    def __init__(self, learning_rate: float, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False):
        if not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepDecay: step_size must be a positive int, got {step_size!r}")
        if gamma >= 1.0:
            raise ValueError(f"StepDecay: gamma must be less than 1.0, got {gamma}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class MultiStepDecay(LRScheduler):
    """Multiply by `gamma` at each epoch listed in `milestones`."""

    def __init__(self, learning_rate: float, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False):
        if list(milestones) != sorted(milestones):
            raise ValueError(f"MultiStepDecay: milestones must be increasing, got {milestones}")
        self.milestones, self.gamma = list(milestones), gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        passed = sum(1 for m in self.milestones if self.last_epoch >= m)
        return self.base_lr * self.gamma ** passed


class PiecewiseDecay(LRScheduler):
    """`values[i]` while `epoch < boundaries[i]`, then `values[-1]`."""

    def __init__(self, boundaries: Sequence[int], values: Sequence[float], last_epoch: int = -1,
                 verbose: bool = False):
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseDecay: need len(values) == len(boundaries) + 1, got "
                             f"{len(values)} values for {len(boundaries)} boundaries")
        self.boundaries, self.values = list(boundaries), [float(v) for v in values]
        super().__init__(self.values[0], last_epoch, verbose)

    def get_lr(self):
        for b, v in zip(self.boundaries, self.values):
            if self.last_epoch < b:
                return v
        return self.values[-1]


class ExponentialDecay(LRScheduler):
    """`lr = base_lr * gamma ** epoch`."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** self.last_epoch


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from `base_lr` down to `eta_min` over `T_max` epochs (SGDR without
    restarts); stepping past `T_max` climbs back up, as in Paddle's recursive form."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1, verbose: bool = False):
        if not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"CosineAnnealingDecay: T_max must be a positive int, got {T_max!r}")
        self.T_max, self.eta_min = T_max, float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e, t = self.last_epoch, self.T_max
        if e == 0:
            return self.base_lr
        if (e - 1 - t) % (2 * t) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / t)) / 2
        return ((1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
                * (self.last_lr - self.eta_min) + self.eta_min)

    def _get_closed_form_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (
            1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class PolynomialDecay(LRScheduler):
    """`(base_lr - end_lr) * (1 - epoch / decay_steps) ** power + end_lr`."""

    def __init__(self, learning_rate: float, decay_steps: int, end_lr: float = 0.0001,
                 power: float = 1.0, cycle: bool = False, last_epoch: int = -1,
                 verbose: bool = False):
        if decay_steps <= 0:
            raise ValueError(f"PolynomialDecay: decay_steps must be positive, got {decay_steps}")
        self.decay_steps, self.end_lr, self.power, self.cycle = decay_steps, end_lr, power, cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e, steps = self.last_epoch, self.decay_steps
        if self.cycle:
            steps = steps * max(1, math.ceil(e / steps))
        else:
            e = min(e, steps)
        return (self.base_lr - self.end_lr) * (1 - e / steps) ** self.power + self.end_lr


class LambdaDecay(LRScheduler):
    """`lr = base_lr * lr_lambda(epoch)`."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1, verbose: bool = False):
        if not callable(lr_lambda):
            raise TypeError("LambdaDecay: lr_lambda must be callable")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.lr_lambda(self.last_epoch)


class LinearWarmup(LRScheduler):
    """Rise linearly from `start_lr` to `end_lr` over `warmup_steps`, then follow
    `learning_rate` (a float, or a scheduler that is stepped from 0 after the warm-up)."""

    keys = ("last_epoch", "last_lr", "learning_rate")

    def __init__(self, learning_rate: float | LRScheduler, warmup_steps: int, start_lr: float,
                 end_lr: float, last_epoch: int = -1, verbose: bool = False):
        if not isinstance(learning_rate, (int, float, LRScheduler)):
            raise TypeError("LinearWarmup: learning_rate must be a float or an LRScheduler, got "
                            f"{type(learning_rate).__name__}")
        if not isinstance(warmup_steps, int) or warmup_steps <= 0:
            raise ValueError(f"LinearWarmup: warmup_steps must be a positive int, got "
                             f"{warmup_steps!r}")
        self.learning_rate = learning_rate
        self.warmup_steps, self.start_lr, self.end_lr = warmup_steps, start_lr, end_lr
        super().__init__(start_lr, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * self.last_epoch / self.warmup_steps + \
                self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return self.learning_rate


class NoamDecay(LRScheduler):
    """The Transformer schedule: `base_lr * d_model**-0.5 * min(e**-0.5, e * warmup**-1.5)`."""

    def __init__(self, d_model: int, warmup_steps: int, learning_rate: float = 1.0,
                 last_epoch: int = -1, verbose: bool = False):
        self.d_model, self.warmup_steps = d_model, warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e = self.last_epoch
        a = 1.0 if e == 0 else e ** -0.5
        return self.base_lr * self.d_model ** -0.5 * min(a, e * self.warmup_steps ** -1.5)


__all__ = [
    "CosineAnnealingDecay",
    "ExponentialDecay",
    "LRScheduler",
    "LambdaDecay",
    "LinearWarmup",
    "MultiStepDecay",
    "NoamDecay",
    "PiecewiseDecay",
    "PolynomialDecay",
    "StepDecay",
]
