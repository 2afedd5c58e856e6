"""Callbacks of rt.Model.fit: the hook order, EarlyStopping's patience / min_delta / baseline /
mode and best-model saving, ModelCheckpoint's files, LRScheduler by step and by epoch, and the
progress printed per epoch."""
import io
import sys

import numpy as np
import pytest

import runtime as rt
from runtime import nn
from runtime.hapi.callbacks import Callback, EarlyStopping, LRScheduler, ModelCheckpoint


def small_data(n=12, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n, 4)).astype("float32")
    y = (x.sum(1) > 0).astype("int64")[:, None]
    return rt.io.TensorDataset([rt.to_tensor(x), rt.to_tensor(y)])


def small_model(learning_rate=0.1):
    rt.seed(0)
    model = rt.Model(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))
    model.prepare(rt.optimizer.SGD(learning_rate, parameters=model.parameters()),
                  nn.CrossEntropyLoss(), rt.metric.Accuracy())
    return model


class Recorder(Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        if name.startswith("on_"):
            def record(*args):
                self.calls.append(name if len(args) < 2 else f"{name}({args[0]})")
            return record
        return super().__getattribute__(name)


def test_hook_order_of_fit_with_evaluation():
    rec = Recorder()
    small_model().fit(small_data(), small_data(n=4), batch_size=6, epochs=2, eval_freq=2,
                      verbose=0, callbacks=[rec])
    train_steps = ["on_train_batch_begin(0)", "on_train_batch_end(0)",
                   "on_train_batch_begin(1)", "on_train_batch_end(1)"]
    assert rec.calls == (
        ["on_train_begin", "on_epoch_begin(0)"] + train_steps + ["on_epoch_end(0)"]
        + ["on_eval_begin", "on_eval_batch_begin(0)", "on_eval_batch_end(0)", "on_eval_end"]
        + ["on_epoch_begin(1)"] + train_steps + ["on_epoch_end(1)", "on_train_end"])
    assert rec.params["epochs"] == 2 and rec.params["steps"] == 2
    assert rec.params["metrics"] == ["loss", "acc"]
    assert isinstance(rec.model, rt.Model)


class FakeModel:
    def __init__(self):
        self.stop_training = False
        self.saved = []

    def save(self, path):
        self.saved.append(path)


def run_early_stopping(values, **kwargs):
    """Feed eval results to an EarlyStopping; returns the 1-based eval that stopped (or None)
    and the paths it saved."""
    cb = EarlyStopping(verbose=0, **kwargs)
    model = FakeModel()
    cb.set_model(model)
    cb.set_params({"save_dir": "ckpt"})
    cb.on_train_begin()
    for i, (name, value) in enumerate(values, start=1):
        cb.on_eval_end({name: value})
        if model.stop_training:
            return i, model.saved
    return None, model.saved


def test_early_stopping_patience_min_delta_baseline_and_mode():
    losses = [("loss", [v]) for v in (1.0, 0.8, 0.79, 0.85, 0.9, 0.5)]
    assert run_early_stopping(losses, patience=1) == (5, ["ckpt/best_model"] * 3)
    # 0.79 is not better than 0.8 by more than 0.05: the wait starts one eval earlier
    assert run_early_stopping(losses, patience=1, min_delta=0.05)[0] == 4
    assert run_early_stopping(losses, patience=5)[0] is None
    # a baseline no eval beats stops after patience + 1 evals, saving nothing
    assert run_early_stopping(losses, patience=2, baseline=0.1) == (3, [])
    accs = [("acc", v) for v in (0.5, 0.6, 0.55, 0.58)]
    assert run_early_stopping(accs, monitor="acc", patience=1)[0] == 4  # auto: max for acc
    assert run_early_stopping(accs, monitor="acc", mode="min", patience=1)[0] == 3
    assert run_early_stopping(accs, monitor="acc", save_best_model=False) == (3, [])
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="best")


def test_early_stopping_warns_on_an_unknown_monitor():
    with pytest.warns(UserWarning, match="'auc' is not in the eval logs"):
        assert run_early_stopping([("loss", [1.0])], monitor="auc")[0] is None


def test_early_stopping_stops_fit_and_saves_the_best(tmp_path):
    epochs = []

    class Epochs(Callback):
        def on_epoch_end(self, epoch, logs=None):
            epochs.append(epoch)

    model = small_model(learning_rate=0.0)  # nothing improves after the first eval
    stop = EarlyStopping("loss", patience=1, verbose=0)
    model.fit(small_data(), small_data(n=6), batch_size=6, epochs=10, verbose=0,
              save_dir=str(tmp_path), callbacks=[stop, Epochs()])
    assert epochs == [0, 1, 2] and model.stop_training
    assert (tmp_path / "best_model.pdparams").exists()


def test_model_checkpoint_files(tmp_path):
    small_model().fit(small_data(), batch_size=6, epochs=3, verbose=0,
                      callbacks=[ModelCheckpoint(save_freq=2, save_dir=str(tmp_path))])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["0.pdopt", "0.pdparams", "2.pdopt", "2.pdparams", "final.pdopt",
                     "final.pdparams"]


def scheduled_model():
    model = small_model()
    schedule = rt.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    model.prepare(rt.optimizer.SGD(schedule, parameters=model.parameters()),
                  nn.CrossEntropyLoss())
    return model, schedule


@pytest.mark.parametrize(("callbacks", "steps"), [(None, 6), ([LRScheduler()], 6),
                                                  ([LRScheduler(False, True)], 3),
                                                  ([LRScheduler(False, False)], 0)])
def test_lr_scheduler_steps_by_step_or_by_epoch(callbacks, steps):
    model, schedule = scheduled_model()
    model.fit(small_data(), batch_size=6, epochs=3, verbose=0, callbacks=callbacks)
    assert schedule.last_epoch == steps
    assert model._optimizer.get_lr() == pytest.approx(0.1 * 0.5 ** steps)
    with pytest.raises(ValueError, match="exclude each other"):
        LRScheduler(by_step=True, by_epoch=True)


def test_progress_lines_per_epoch(capsys):
    model = small_model()
    model.fit(small_data(n=24), small_data(n=8), batch_size=6, epochs=2, log_freq=2,
              verbose=2)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Epoch 1/2"
    steps = [line.split(" - ")[0] for line in out[1:4]]
    assert steps == ["step 2/4", "step 4/4", "Eval begin..."]
    assert out[1].split(" - ")[1].startswith("loss: ") and " - acc: " in out[1]
    assert out[5] == "Eval samples: 8" and out[6] == "Epoch 2/2"
    model.fit(small_data(), batch_size=6, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_per_epoch_on_a_terminal(monkeypatch):
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    small_model().fit(small_data(n=24), batch_size=6, epochs=2, verbose=1)
    lines = screen.getvalue().split("\n")
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and lines[4] == ""
    for bar in (lines[1], lines[3]):  # one line per epoch, redrawn once per step
        frames = [f for f in bar.split("\r") if f]
        assert len(frames) == 4
        assert frames[0].startswith("step 1/4 [" + "=" * 6 + ">" + "." * 23 + "] - loss: ")
        assert frames[-1].startswith("step 4/4 [" + "=" * 30 + "] - loss: ")
