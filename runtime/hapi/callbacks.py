"""Callbacks of `rt.Model.fit` / `evaluate` / `predict`, with Paddle's hook names.

`fit` calls, in order: `on_train_begin`, then per epoch `on_epoch_begin`, per step
`on_train_batch_begin` / `on_train_batch_end`, `on_epoch_end`, and (every `eval_freq` epochs
with `eval_data`) `on_eval_begin`, `on_eval_batch_begin` / `_end`, `on_eval_end`; finally
`on_train_end`. `logs` is a dict: `loss` (a list, one value per loss), each metric's name,
`step` and `batch_size`. A callback reads the Model as `self.model` and fit's settings as
`self.params` (`epochs`, `steps`, `verbose`, `metrics`, `save_dir`, ...).

>>> import runtime as rt
>>> class CountSteps(rt.callbacks.Callback):
...     def on_train_begin(self, logs=None):
...         self.steps = 0
...     def on_train_batch_end(self, step, logs=None):
...         self.steps += 1
"""
from __future__ import annotations

import math
import os
import warnings

from ..optimizer.lr import LRScheduler as LRSchedule
from ..progress import ProgressBar

HOOK_MODES = ("train", "eval", "predict")


class Callback:
    """The base class: every hook does nothing; subclasses override the ones they need."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_params(self, params: dict) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_eval_begin(self, logs=None): ...
    def on_eval_end(self, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, step, logs=None): ...
    def on_train_batch_end(self, step, logs=None): ...
    def on_eval_batch_begin(self, step, logs=None): ...
    def on_eval_batch_end(self, step, logs=None): ...
    def on_predict_batch_begin(self, step, logs=None): ...
    def on_predict_batch_end(self, step, logs=None): ...


class CallbackList:
    """Calls one hook on every callback, in order."""

    def __init__(self, callbacks: list):
        self.callbacks = list(callbacks)

    def set_model(self, model) -> None:
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params: dict) -> None:
        for c in self.callbacks:
            c.set_params(params)

    def call(self, hook: str, *args) -> None:
        for c in self.callbacks:
            getattr(c, hook)(*args)

    def on_begin(self, mode: str, logs=None) -> None:
        self.call(f"on_{mode}_begin", logs)

    def on_end(self, mode: str, logs=None) -> None:
        self.call(f"on_{mode}_end", logs)

    def on_epoch_begin(self, epoch: int, logs=None) -> None:
        self.call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        self.call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode: str, step: int, logs=None) -> None:
        self.call(f"on_{mode}_batch_begin", step, logs)

    def on_batch_end(self, mode: str, step: int, logs=None) -> None:
        self.call(f"on_{mode}_batch_end", step, logs)


class ProgBarLogger(Callback):
    """Prints progress (added by `fit`/`evaluate`/`predict` unless one is given). `verbose`:
    0 silent; 1 a bar per epoch, redrawn in place on a terminal (plain lines elsewhere);
    2 one plain line every `log_freq` steps and at an epoch's end (Paddle's default)."""

    def __init__(self, log_freq: int = 1, verbose: int = 2):
        super().__init__()
        self.log_freq = log_freq
        self.verbose = verbose
        self.bar = None
        self.step = 0
        self.samples = 0

    def begin_pass(self, steps) -> None:
        self.step, self.samples = 0, 0
        self.bar = ProgressBar(total=steps, verbose=self.verbose, every=self.log_freq,
                               tty=False if self.verbose == 2 else None)

    def shown(self, logs: dict) -> list:
        names = self.params.get("metrics", [])
        return [(name, logs[name]) for name in names if name in (logs or {})]

    def batch_end(self, logs) -> None:
        self.step += 1
        self.samples += (logs or {}).get("batch_size", 0)
        self.bar.update(self.step, self.shown(logs or {}))

    def say(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def on_epoch_begin(self, epoch, logs=None):
        self.say(f"Epoch {epoch + 1}/{self.params.get('epochs', '?')}")
        self.begin_pass(self.params.get("steps"))

    def on_train_batch_end(self, step, logs=None):
        self.batch_end(logs)

    def on_epoch_end(self, epoch, logs=None):
        self.bar.finish(self.step, self.shown(logs or {}))

    def on_eval_begin(self, logs=None):
        self.say("Eval begin...")
        self.begin_pass((logs or {}).get("steps"))

    def on_eval_batch_end(self, step, logs=None):
        self.batch_end(logs)

    def on_eval_end(self, logs=None):
        self.bar.finish(self.step, self.shown(logs or {}))
        self.say(f"Eval samples: {self.samples}")

    def on_predict_begin(self, logs=None):
        self.say("Predict begin...")
        self.begin_pass((logs or {}).get("steps"))

    def on_predict_batch_end(self, step, logs=None):
        self.batch_end(logs)

    def on_predict_end(self, logs=None):
        self.bar.finish(self.step)
        self.say(f"Predict samples: {self.samples}")


class ModelCheckpoint(Callback):
    """Saves the model (`Model.save(path)`: parameters and optimizer state) to
    `save_dir/<epoch>` every `save_freq` epochs and to `save_dir/final` when training ends.
    Without `save_dir` (here or fit's) nothing is saved."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None):
        super().__init__()
        self.save_freq = int(save_freq)
        self.save_dir = save_dir

    def on_train_begin(self, logs=None):
        self.save_dir = self.save_dir or self.params.get("save_dir")

    def on_epoch_end(self, epoch, logs=None):
        if self.save_dir and epoch % self.save_freq == 0:
            self.model.save(os.path.join(self.save_dir, str(epoch)))

    def on_train_end(self, logs=None):
        if self.save_dir:
            self.model.save(os.path.join(self.save_dir, "final"))


class LRScheduler(Callback):
    """Steps the optimizer's learning-rate scheduler after every training step (`by_step`) or
    after every epoch (`by_epoch`). `fit` adds one stepping by step unless one is given."""

    def __init__(self, by_step: bool = True, by_epoch: bool = False):
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("LRScheduler: by_step and by_epoch exclude each other")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def step_schedule(self) -> None:
        optimizer = getattr(self.model, "_optimizer", None)
        schedule = getattr(optimizer, "_learning_rate", None)
        if isinstance(schedule, LRSchedule):
            schedule.step()

    def on_train_batch_end(self, step, logs=None):
        if self.by_step:
            self.step_schedule()

    def on_epoch_end(self, epoch, logs=None):
        if self.by_epoch:
            self.step_schedule()


class EarlyStopping(Callback):
    """Stops `fit` when the evaluated `monitor` (a name in the eval logs: `loss`, `acc`, ...)
    has not improved by more than `min_delta` for more than `patience` evaluations. `mode`
    'min' or 'max' says which way is better ('auto': 'max' for names containing 'acc', else
    'min'); a `baseline` is the value to beat from the start. With `save_best_model` and
    fit's `save_dir`, the best model is saved to `save_dir/best_model`. Needs `eval_data`."""

    def __init__(self, monitor: str = "loss", mode: str = "auto", patience: int = 0,
                 verbose: int = 1, min_delta: float = 0, baseline: float | None = None,
                 save_best_model: bool = True):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'auto', 'min' or 'max', got {mode!r}")
        self.monitor = monitor
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = baseline
        self.save_best_model = save_best_model
        self.higher_is_better = mode == "max" or (mode == "auto" and "acc" in monitor)
        self.min_delta = abs(min_delta)
        self.save_dir = None
        self.on_train_begin()

    def improved(self, value: float) -> bool:
        if self.higher_is_better:
            return value - self.min_delta > self.best_value
        return value + self.min_delta < self.best_value

    def on_train_begin(self, logs=None):
        self.wait_epoch = 0
        self.stopped_epoch = 0
        self.save_dir = self.params.get("save_dir")
        if self.baseline is not None:
            self.best_value = float(self.baseline)
        else:
            self.best_value = -math.inf if self.higher_is_better else math.inf

    def on_eval_end(self, logs=None):
        if logs is None or self.monitor not in logs:
            warnings.warn(f"EarlyStopping: monitor {self.monitor!r} is not in the eval logs "
                          f"({sorted(logs or {})}); nothing is checked", stacklevel=2)
            return
        value = logs[self.monitor]
        value = float(value[0] if isinstance(value, (list, tuple)) else value)
        if math.isnan(value):
            return
        if self.improved(value):
            self.best_value, self.wait_epoch = value, 0
            if self.save_best_model and self.save_dir:
                self.model.save(os.path.join(self.save_dir, "best_model"))
        else:
            self.wait_epoch += 1
        if self.wait_epoch > self.patience:
            self.model.stop_training = True
            if self.verbose:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.", flush=True)
        self.stopped_epoch += 1


def config_callbacks(callbacks, model, params: dict, mode: str, log_freq: int = 10,
                     verbose: int = 2, save_freq: int = 1, save_dir: str | None = None
                     ) -> CallbackList:
    """The callbacks a pass runs: the user's, plus a progress logger, (when training) an
    LRScheduler stepping per step and a ModelCheckpoint, unless of those kinds one is
    given (Paddle's defaults)."""
    cbks = list(callbacks or [])
    if not any(isinstance(c, ProgBarLogger) for c in cbks):
        cbks = [ProgBarLogger(log_freq, verbose)] + cbks
    if mode == "train" and not any(isinstance(c, LRScheduler) for c in cbks):
        cbks = [LRScheduler()] + cbks
    if mode == "train" and not any(isinstance(c, ModelCheckpoint) for c in cbks):
        cbks = cbks + [ModelCheckpoint(save_freq, save_dir)]
    out = CallbackList(cbks)
    out.set_model(model)
    out.set_params(dict(params, save_dir=save_dir, verbose=verbose))
    return out
