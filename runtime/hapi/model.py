"""`rt.Model`: Paddle's high-level training API (`paddle.Model`) around a Layer.

>>> import numpy as np, runtime as rt
>>> _ = rt.seed(0)
>>> x = np.random.RandomState(0).rand(64, 4).astype("float32")
>>> data = rt.io.TensorDataset([rt.to_tensor(x), rt.to_tensor((x.sum(1) > 2).astype("int64"))])
>>> model = rt.Model(rt.nn.Sequential(rt.nn.Linear(4, 16), rt.nn.ReLU(), rt.nn.Linear(16, 2)))
>>> model.prepare(rt.optimizer.Adam(0.01, parameters=model.parameters()),
...               rt.nn.CrossEntropyLoss(), rt.metric.Accuracy())
>>> model.fit(data, batch_size=16, epochs=30, verbose=0)
>>> model.evaluate(data, batch_size=16, verbose=0)["acc"] > 0.9
True
"""
from __future__ import annotations

import inspect
import os
import warnings

import numpy as np

from .. import serialization
from ..autograd import no_grad
from ..data import DataLoader, Dataset
from ..metric import Metric
from ..ops.accumulate import add_n
from ..static import InputSpec
from ..tensor import Tensor, to_tensor
from . import static_converter
from .callbacks import config_callbacks
from .summary import summary


def as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def as_tensors(values) -> list:
    return [v if isinstance(v, Tensor) else to_tensor(v) for v in as_list(values)]


def as_specs(specs, what: str) -> list:
    specs = list(specs.values()) if isinstance(specs, dict) else as_list(specs)
    for s in specs:
        if not isinstance(s, InputSpec):
            raise TypeError(f"Model: {what} must be InputSpecs (rt.static.InputSpec), got "
                            f"{type(s).__name__}")
    return specs


def forward_arity(network) -> int:
    """How many positional inputs the network's forward takes (at least 1)."""
    forward = getattr(network.forward, "__wrapped__", network.forward)
    try:
        params = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p for p in params if p.kind in kinds and p.name != "self"]
    return max(1, len(names))


class Model:
    """A network with its optimizer, loss and metrics, trained by `fit`, measured by
    `evaluate`, run by `predict`, saved by `save`.

    `inputs` (InputSpecs, one per forward input) make `Model` convert the network with
    `d2s.to_static(network, input_spec=inputs)`: `import d2s` first. The runtime never
    imports `d2s` (it sits above the runtime); `d2s` registers the converter on import (see
    `runtime/hapi/static_converter.py`), and without it a Model given `inputs` raises rather
    than silently training eagerly. `rt.Model(d2s.to_static(net))` works too. `labels` are
    InputSpecs of the labels (only their number is used: how each batch is split into
    inputs and labels). Without `inputs` the split is the number of forward's arguments.
    """

    def __init__(self, network, inputs=None, labels=None):
        self.network = network
        self._inputs = as_specs(inputs, "inputs")
        self._labels = as_specs(labels, "labels")
        self._optimizer = None
        self._loss = None
        self._metrics = []
        self.stop_training = False
        self._accumulate = 1  # fit's accumulate_grad_batches
        self._iters_left = None  # the training steps fit's num_iters leaves
        if self._inputs:
            self.network = static_converter.convert(network, self._inputs)
        self._input_count = len(self._inputs) or forward_arity(network)

    # ---- setup -----------------------------------------------------------------------------
    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None) -> None:
        """Set what `fit` trains with: `loss(*outputs, *labels)` (a Layer or a function),
        and `metrics` (`rt.metric.Metric`s, or a list of them)."""
        if amp_configs is not None:
            raise NotImplementedError("Model.prepare: amp_configs is not supported; wrap the "
                                      "forward in rt.amp.auto_cast yourself")
        if loss is not None and not callable(loss):
            raise TypeError(f"Model.prepare: loss must be callable, got {type(loss).__name__}")
        self._metrics = as_list(metrics)
        for m in self._metrics:
            if not isinstance(m, Metric):
                raise TypeError(f"Model.prepare: metrics must be rt.metric.Metric objects, "
                                f"got {type(m).__name__}")
        self._optimizer = optimizer
        self._loss = loss

    def parameters(self, *args, **kwargs) -> list:
        return self.network.parameters(*args, **kwargs)

    def metrics_name(self) -> list:
        """The names `fit` logs: 'loss' (when there is a loss), then each metric's."""
        names = ["loss"] if self._loss is not None else []
        for m in self._metrics:
            names += as_list(m.name())
        return names

    # ---- one batch ---------------------------------------------------------------------------
    def forward_outputs(self, inputs) -> list:
        return as_list(self.network(*as_tensors(inputs)))

    def compute_losses(self, outputs: list, labels: list) -> list:
        return as_list(self._loss(*(outputs + labels))) if self._loss is not None else []

    def update_metrics(self, outputs: list, labels: list) -> list:
        return [m.update(*as_list(m.compute(*(outputs + labels)))) for m in self._metrics]

    @staticmethod
    def batch_result(losses: list, metrics: list):
        losses = [loss.numpy() for loss in losses]
        if losses and metrics:
            return losses, metrics
        return losses if losses else metrics

    def train_batch(self, inputs, labels=None, update: bool = True):
        """One training step: forward, loss, backward and (with `update`) the optimizer step
        and clearing the gradients. Returns the losses as NumPy arrays (and the metrics'
        batch values when there are metrics)."""
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("Model.train_batch: call prepare(optimizer, loss) first")
        self.network.train()
        outputs, labels = self.forward_outputs(inputs), as_tensors(labels)
        losses = self.compute_losses(outputs, labels)
        (losses[0] if len(losses) == 1 else add_n(losses)).backward()
        if update:
            self._optimizer.step()
            self._optimizer.clear_grad()
        with no_grad():
            metrics = self.update_metrics(outputs, labels)
        return self.batch_result(losses, metrics)

    def eval_batch(self, inputs, labels=None):
        """Forward, loss and metrics of one batch in eval mode, without gradients."""
        self.network.eval()
        with no_grad():
            outputs, labels = self.forward_outputs(inputs), as_tensors(labels)
            losses = self.compute_losses(outputs, labels)
            metrics = self.update_metrics(outputs, labels)
        return self.batch_result(losses, metrics)

    def predict_batch(self, inputs) -> list:
        """The network's outputs for one batch (eval mode), as NumPy arrays."""
        self.network.eval()
        with no_grad():
            return [o.numpy() for o in self.forward_outputs(inputs)]

    # ---- passes over data ------------------------------------------------------------------
    @staticmethod
    def loader(data, batch_size: int, shuffle: bool, drop_last: bool):
        if data is None or isinstance(data, DataLoader):
            return data
        if isinstance(data, Dataset):
            return DataLoader(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
        raise TypeError(f"Model: data must be an rt.io.Dataset or rt.io.DataLoader, got "
                        f"{type(data).__name__}")

    @staticmethod
    def steps_of(loader):
        try:
            return len(loader)
        except TypeError:  # an IterableDataset has no length
            return None

    def run_pass(self, loader, cbks, mode: str):
        """One pass over `loader` in `mode` ('train', 'eval' or 'predict'): the logs of its
        last step (train, eval) or the outputs of every batch (predict). Training updates
        the parameters every `accumulate_grad_batches` steps (and after the last one) and
        stops the pass, and `fit`, when the `num_iters` budget is spent."""
        logs, outputs, pending = {}, [], False
        for m in self._metrics:
            m.reset()
        for step, data in enumerate(loader):
            data = as_list(data)
            inputs, labels = data[:self._input_count], data[self._input_count:]
            cbks.on_batch_begin(mode, step, logs)
            if mode == "predict":
                outputs.append(self.predict_batch(inputs))
            else:
                if mode == "train":
                    pending = (step + 1) % self._accumulate != 0
                    batch = self.train_batch(inputs, labels, update=not pending)
                else:
                    batch = self.eval_batch(inputs, labels)
                logs.update(zip(self.metrics_name(), self.logged_values(batch), strict=True))
            logs["step"] = step
            logs["batch_size"] = int(data[0].shape[0])
            cbks.on_batch_end(mode, step, logs)
            if mode == "train" and self._iters_left is not None:
                self._iters_left -= 1
                if self._iters_left <= 0:
                    self.stop_training = True
                    break
        if pending:  # the gradients of the last, incomplete group of steps
            self._optimizer.step()
            self._optimizer.clear_grad()
        return outputs if mode == "predict" else logs

    def logged_values(self, batch) -> list:
        """A batch's losses (as one list) and each metric's value so far, in
        `metrics_name()` order."""
        losses = batch[0] if self._metrics and self._loss is not None else batch
        values = [[float(np.asarray(v).reshape(-1)[0]) for v in losses]] \
            if self._loss is not None else []
        for m in self._metrics:
            values += as_list(m.accumulate())
        return values

    def fit(self, train_data=None, eval_data=None, batch_size: int = 1, epochs: int = 1,
            eval_freq: int = 1, log_freq: int = 10, save_dir: str | None = None,
            save_freq: int = 1, verbose: int = 2, drop_last: bool = False, shuffle: bool = True,
            num_workers: int = 0, callbacks=None, accumulate_grad_batches: int = 1,
            num_iters: int | None = None) -> None:
        """Train for `epochs` passes over `train_data` (an `rt.io.Dataset`, batched here, or
        a DataLoader), evaluating on `eval_data` every `eval_freq` epochs. Returns None (as
        Paddle's); callbacks see the logs. Stops early when a callback sets
        `model.stop_training` (EarlyStopping does, after an evaluation), or after
        `num_iters` training steps in all (which then replaces `epochs`, as in Paddle).
        `accumulate_grad_batches=k` sums the gradients of k steps into each update."""
        if train_data is None:
            raise ValueError("Model.fit: train_data is required")
        if int(accumulate_grad_batches) < 1 or (num_iters is not None and int(num_iters) < 1):
            raise ValueError("Model.fit: accumulate_grad_batches and num_iters must be >= 1")
        self._accumulate = int(accumulate_grad_batches)
        self._iters_left = None if num_iters is None else int(num_iters)
        train_loader = self.loader(train_data, batch_size, shuffle, drop_last)
        eval_loader = self.loader(eval_data, batch_size, False, False)
        steps = self.steps_of(train_loader)
        if num_iters is not None and steps:
            epochs = int(num_iters) // steps + 1
        cbks = config_callbacks(callbacks, self, {"epochs": epochs, "steps": steps,
                                                  "batch_size": batch_size,
                                                  "metrics": self.metrics_name()},
                                "train", log_freq, verbose, save_freq, save_dir)
        self.stop_training = False
        cbks.on_begin("train")
        logs = {}
        for epoch in range(epochs):
            cbks.on_epoch_begin(epoch)
            logs = self.run_pass(train_loader, cbks, "train")
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and epoch % eval_freq == 0:
                cbks.on_begin("eval", {"steps": self.steps_of(eval_loader),
                                       "metrics": self.metrics_name()})
                cbks.on_end("eval", self.run_pass(eval_loader, cbks, "eval"))
            if self.stop_training:
                break
        cbks.on_end("train", logs)

    def evaluate(self, eval_data, batch_size: int = 1, log_freq: int = 10, verbose: int = 2,
                 num_workers: int = 0, callbacks=None) -> dict:
        """The loss and metrics over `eval_data`, as Paddle returns them: `{'loss': [the last
        batch's loss], '<metric name>': value over all batches, ...}`."""
        loader = self.loader(eval_data, batch_size, False, False)
        cbks = config_callbacks(callbacks, self, {"steps": self.steps_of(loader),
                                                  "metrics": self.metrics_name()},
                                "eval", log_freq, verbose)
        cbks.on_begin("eval", {"steps": self.steps_of(loader), "metrics": self.metrics_name()})
        logs = self.run_pass(loader, cbks, "eval")
        cbks.on_end("eval", logs)
        return {name: logs[name] for name in self.metrics_name() if name in logs}

    def predict(self, test_data, batch_size: int = 1, num_workers: int = 0,
                stack_outputs: bool = False, verbose: int = 1, callbacks=None) -> list:
        """The network's outputs on `test_data`: a list with one entry per output, each the
        list of its batches (NumPy arrays), or one array with `stack_outputs`. A batch's
        inputs are its first `len(inputs)` fields (labels in the data are ignored)."""
        loader = self.loader(test_data, batch_size, False, False)
        cbks = config_callbacks(callbacks, self, {"steps": self.steps_of(loader),
                                                  "metrics": []}, "predict", 10, verbose)
        cbks.on_begin("predict", {"steps": self.steps_of(loader)})
        batches = self.run_pass(loader, cbks, "predict")
        cbks.on_end("predict", {})
        per_output = [list(o) for o in zip(*batches)]
        if stack_outputs:
            per_output = [np.concatenate(o, axis=0) for o in per_output]
        return per_output

    # ---- saving ----------------------------------------------------------------------------
    def save(self, path: str, training: bool = True) -> None:
        """`training=True`: the parameters to `path.pdparams` and the optimizer's state to
        `path.pdopt` (what `load` reads). `training=False`: an inference model written by
        `d2s.save` (needs `import d2s`), for the `inputs` given to the Model."""
        if not training:
            static_converter.save_inference(self.network, path, self._inputs or None)
            return
        serialization.save(self.network.state_dict(), path + ".pdparams")
        if self._optimizer is not None:
            serialization.save(self._optimizer.state_dict(), path + ".pdopt")

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False):
        """Read what `save(path)` wrote. A parameter whose shape differs from the network's
        raises, or with `skip_mismatch` is skipped with a warning; the optimizer's state is
        restored unless `reset_optimizer` (or its file is absent)."""
        path = path.removesuffix(".pdparams")
        saved = serialization.load(path + ".pdparams")
        own = self.network.state_dict()
        matched = {}
        for name, value in saved.items():
            if name not in own:
                if not skip_mismatch:
                    raise ValueError(f"Model.load: {path}.pdparams has {name!r}, which the "
                                     "network does not (skip_mismatch=True to ignore it)")
                warnings.warn(f"Model.load: skipping {name!r} (not in the network)",
                              stacklevel=2)
            elif list(value.shape) != list(own[name].shape):
                if not skip_mismatch:
                    raise ValueError(f"Model.load: {name!r} has shape {list(value.shape)} in "
                                     f"the file but {list(own[name].shape)} in the network")
                warnings.warn(f"Model.load: skipping {name!r}: shape {list(value.shape)} in "
                              f"the file, {list(own[name].shape)} in the network", stacklevel=2)
            else:
                matched[name] = value
        self.network.set_state_dict(matched)
        if self._optimizer is not None and not reset_optimizer \
                and os.path.exists(path + ".pdopt"):
            self._optimizer.set_state_dict(serialization.load(path + ".pdopt"))

    def summary(self, input_size=None, dtype=None) -> dict:
        """`rt.summary` of the network; `input_size` defaults to the Model's `inputs`."""
        if input_size is None:
            if not self._inputs:
                raise ValueError("Model.summary: give input_size (the Model has no inputs)")
            input_size = [tuple(1 if d in (None, -1) else d for d in s.shape)
                          for s in self._inputs]
            dtype = dtype or [s.dtype for s in self._inputs]
        return summary(self.network, input_size, dtype)
