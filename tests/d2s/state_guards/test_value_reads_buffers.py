"""A Layer buffer or parameter whose value the converted code reads as Python (a step counter,
an ActNorm "initialized" flag, an EMA's update count) makes the program depend on that value:
changed in place by the caller, by the converted call's own writeback or inside `rt.no_grad`,
the next call traces for the new value (or reuses the program of an earlier, equal one) and
gives eager's answer, never the value baked in at the first trace."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import errors
from runtime import nn

pytestmark = pytest.mark.filterwarnings("ignore:d2s.*traced:UserWarning")


def _programs(layer) -> int:
    return len(layer.forward.program_cache)


class StepScaled(nn.Layer):
    """`x * step` with `step` a counter buffer read as a Python number, then advanced."""

    def __init__(self, read: str, advance: str):
        super().__init__()
        self.read, self.advance = read, advance
        self.register_buffer("step", rt.zeros([], "int64"))

    def forward(self, x):
        if self.read == "int":
            s = int(self.step)
        elif self.read == "item":
            s = self.step.item()
        else:
            s = float(self.step)
        if self.advance == "rebind":
            self.step = self.step + 1
        elif self.advance == "set_value":
            self.step.set_value(self.step + 1)
        return x * s + 1


@pytest.mark.parametrize("read", ["int", "item", "float"])
@pytest.mark.parametrize("advance", ["rebind", "set_value"])
def test_a_counter_advanced_by_the_converted_call_is_read_anew(read, advance):
    eager, model = StepScaled(read, advance), StepScaled(read, advance)
    static = d2s.to_static(model)
    x = rt.to_tensor([1.0, -2.0])
    for i in range(4):
        want = np.array([1.0, -2.0], "float32") * i + 1
        np.testing.assert_allclose(eager(x).numpy(), want)
        np.testing.assert_allclose(static(x).numpy(), want)
        assert int(model.step) == int(eager.step) == i + 1
    assert _programs(static) == 4  # one program per value read


def test_a_counter_set_by_the_caller_between_calls_reuses_the_program_of_its_value():
    eager, model = StepScaled("int", "none"), StepScaled("int", "none")
    static = d2s.to_static(model)
    x = rt.to_tensor([2.0])
    for value in (3, 5, 3, 5, 0):
        for m in (eager, model):
            m.step.set_value(rt.to_tensor(value, dtype="int64"))
        np.testing.assert_allclose(static(x).numpy(), eager(x).numpy())
        np.testing.assert_allclose(static(x).numpy(), [2.0 * value + 1])
    model.step[...] = 7  # in place by indexing
    np.testing.assert_allclose(static(x).numpy(), [15.0])
    assert _programs(static) == 4  # 3, 5, 0, 7


class ActNorm(nn.Layer):
    """Glow's ActNorm: the first batch sets scale and bias (data-dependent init), once."""

    def __init__(self, channels: int):
        super().__init__()
        self.scale = self.create_parameter(
            [channels], default_initializer=nn.initializer.Constant(1.0))
        self.bias = self.create_parameter(
            [channels], default_initializer=nn.initializer.Constant(0.0))
        self.register_buffer("initialized", rt.zeros([], "int64"))

    def forward(self, x):
        if not self.initialized:
            with rt.no_grad():
                mean, std = x.mean(axis=0), x.std(axis=0)
                self.bias.set_value(-mean / (std + 1e-6))
                self.scale.set_value(1.0 / (std + 1e-6))
                self.initialized.set_value(rt.ones([], "int64"))
        return x * self.scale + self.bias


def _actnorm_reference(batches):
    first = batches[0]
    mean, std = first.mean(axis=0), first.std(axis=0, ddof=1)  # (unbiased, as Paddle)
    return [b * (1.0 / (std + 1e-6)) + (-mean / (std + 1e-6)) for b in batches]


def test_actnorm_initializes_from_the_first_batch_only():
    batches = [np.random.RandomState(i).randn(6, 3).astype("float32") * (i + 1) + i
               for i in range(4)]
    eager, model = ActNorm(3), ActNorm(3)
    static = d2s.to_static(model)
    want = _actnorm_reference(batches)
    assert len(want) == len(batches)
    for b, ref in zip(batches, want):
        x = rt.to_tensor(b)
        np.testing.assert_allclose(eager(x).numpy(), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(static(x).numpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.scale.numpy(), eager.scale.numpy(), rtol=1e-6)
    assert _programs(static) == 2  # before and after the flag is set

    model.initialized.set_value(rt.zeros([], "int64"))  # re-initialize on the next batch
    x = rt.to_tensor(batches[2])
    np.testing.assert_allclose(static(x).numpy(), _actnorm_reference([batches[2]])[0],
                               rtol=1e-5, atol=1e-5)
    assert _programs(static) == 2  # the program for "not initialized" again


class WarmupEMA(nn.Layer):
    """An exponential moving average whose decay warms up over the first updates (timm's
    ModelEmaV2 idiom), the count kept in a buffer and read as a Python number."""

    def __init__(self, warmup: int):
        super().__init__()
        self.warmup = warmup
        self.register_buffer("num_updates", rt.zeros([], "int64"))
        self.register_buffer("average", rt.zeros([2]))

    def forward(self, x):
        if self.num_updates < self.warmup:
            decay = 0.0
        else:
            decay = 0.5
        n = int(self.num_updates)
        with rt.no_grad():
            self.average.set_value(self.average * decay + x * (1 - decay))
            self.num_updates.set_value(self.num_updates + 1)
        return self.average * 1.0 + n


def test_an_ema_warmup_follows_its_update_count():
    xs = [np.array([i, -2.0 * i], "float32") for i in range(1, 6)]
    average, want = np.zeros(2, "float32"), []
    for n, x in enumerate(xs):
        decay = 0.0 if n < 2 else 0.5
        average = average * decay + x * (1 - decay)
        want.append(average + n)
    eager, model = WarmupEMA(2), WarmupEMA(2)
    static = d2s.to_static(model)
    for x, ref in zip(xs, want):
        np.testing.assert_allclose(eager(rt.to_tensor(x)).numpy(), ref)
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), ref)
    np.testing.assert_allclose(model.average.numpy(), eager.average.numpy())
    assert int(model.num_updates) == 5


class AdvanceThenRead(nn.Layer):
    """Changes its counter, then reads it as a Python number in the same call."""

    def __init__(self, advance: str):
        super().__init__()
        self.advance = advance
        self.register_buffer("step", rt.zeros([], "int64"))

    def forward(self, x):
        if self.advance == "iadd":
            self.step += 1
        elif self.advance == "set_value":
            self.step.set_value(self.step + 1)
        else:
            self.step = self.step + 1
        return x * int(self.step)


@pytest.mark.parametrize("advance", ["iadd", "rebind"])
def test_a_counter_rebound_then_read_as_a_number_follows_eager(advance):
    """`self.step += 1` (or `self.step = self.step + 1`) rebinds the buffer to the new value,
    so the `int(self.step)` after it reads that value, computed when the program runs: one
    program for every call, the buffer a new Tensor each call, as eager's."""
    eager, static = AdvanceThenRead(advance), d2s.to_static(AdvanceThenRead(advance))
    kept = []
    for step in range(1, 5):
        for model in (eager, static):
            np.testing.assert_allclose(model(rt.to_tensor([2.0])).numpy(), [2.0 * step])
            assert int(model.step) == step and model.step.dtype == rt.int64
        kept.append(static.step)
    assert [int(t) for t in kept] == [1, 2, 3, 4]  # (each call's own Tensor)
    assert static.forward.get_traced_count() == 1


@pytest.mark.parametrize("advance", ["set_value"])
def test_a_read_after_the_call_changed_the_tensor_is_refused_at_the_users_line(advance):
    eager = AdvanceThenRead(advance)
    np.testing.assert_allclose(eager(rt.to_tensor([2.0])).numpy(), [2.0])
    static = d2s.to_static(AdvanceThenRead(advance))
    with pytest.raises(d2s.ConversionError) as info:
        static(rt.to_tensor([2.0]))
    message = str(info.value)
    assert "the value of self.step is read as Python" in message
    assert "after the converted call changed it" in message
    frames = errors.user_frames(info.value)
    assert len(frames) >= 1
    assert (frames[-1].function, frames[-1].source) == ("forward", "return x * int(self.step)")
    assert frames[-1].filename == __file__


class CountPositive(nn.Layer):
    """Counts positive batches; reads the count as a number on the other branch, or after
    the `if` (`read_after`: "plain", or "branch": in a later tensor `if`)."""

    def __init__(self, read_after: str = ""):
        super().__init__()
        self.read_after = read_after
        self.register_buffer("count", rt.zeros([], "int64"))

    def forward(self, x):
        n = 0
        if x.mean() > 0:
            self.count.set_value(self.count + 1)
        else:
            n = int(self.count)
        if self.read_after == "plain":
            n = int(self.count)
        if self.read_after == "branch" and x.sum() > -100:  # a later tensor `if`
            n = int(self.count)
        return x * n + self.count


def test_a_read_on_the_branch_that_does_not_change_the_tensor_follows_it():
    eager, model = CountPositive(), CountPositive()
    static = d2s.to_static(model)
    count, want = 0, []
    for v in (1.0, -1.0, 2.0, -3.0):
        want.append(v * count + count if v < 0 else count + 1)
        count += v > 0
    assert len(want) == 4
    for v, ref in zip((1.0, -1.0, 2.0, -3.0), want):
        np.testing.assert_allclose(eager(rt.to_tensor([v])).numpy(), [ref])
        np.testing.assert_allclose(static(rt.to_tensor([v])).numpy(), [ref])


@pytest.mark.parametrize("read_after", ["plain", "branch"])
def test_a_read_after_a_branch_that_changed_the_tensor_is_refused(read_after):
    static = d2s.to_static(CountPositive(read_after))
    with pytest.raises(d2s.ConversionError, match="the value of self.count is read as Python"):
        static(rt.to_tensor([1.0]))
