"""Lists of Python numbers whose item types change inside nested graph blocks (issue 35,
internal errors): a list of ints (floats, bools) that an inner graph loop grows with a number
of its own type first (written in place) and then of another type (its items become
`[value, kind]` pairs), read by `len()` after the inner loop, in a loop nested in a loop, in a
loop inside a tensor `if` inside a loop, through `self.` state. The pairs array is made where
the loop-carried value is made (before the inner loop), so the outer blocks see it; it was an
internal "Variable 't36' (array<f64[2]>) was created inside a cond/while block" (nested loops)
or a `cond` output mismatch (the `if` around the inner loop). Eager vs static vs NumPy over
inputs that take different paths (loops of zero, one and several trips; the `if` taken or
not) through one program; each item's Python type as eager's."""
import math

import numpy as np

import d2s
import runtime as rt

INPUTS = [[0.5, 1.5], [2.5, 0.5], [-1.0, 2.0], [1.5, -1.0], [3.0, 2.0]]


def trips(v: float) -> int:
    """The trips of `while i < v` from `i = 0` by steps of 1."""
    return max(0, math.ceil(v))


def decode_lengths(x):
    lengths = [0]
    h = x * 1.0
    step = rt.zeros([])
    while step < x[0]:
        step = step + 1.0
        j = rt.zeros([])
        while j < x[1]:
            j = j + 1.0
            lengths.append(1)
            lengths.append(0.5)
        h = h + len(lengths)
    return h, len(lengths), sum(lengths), lengths


def decode_lengths_ref(xv):
    lengths, h = [0], xv.astype("float32")
    for _ in range(trips(xv[0])):
        lengths += [1, 0.5] * trips(xv[1])
        h = h + np.float32(len(lengths))
    return h, len(lengths), sum(lengths), lengths


def beam_flags(x):
    n = rt.cast(rt.clip(x[0], 0.0, 3.0), "int64")
    m = rt.cast(rt.clip(x[1], 0.0, 3.0), "int64")
    done = [False]
    score = x * 0.0
    for i in range(n):
        for k in range(m):
            done.append(True)
            done.append(0.25)
        score = score + len(done)
    return score, len(done), sum(done), done


def beam_flags_ref(xv):
    done, score = [False], np.zeros(2, "float32")
    for _ in range(int(np.clip(xv[0], 0, 3))):
        done += [True, 0.25] * int(np.clip(xv[1], 0, 3))
        score = score + np.float32(len(done))
    return score, len(done), sum(done), done


def gated_ratios(x):
    ratios = [0.5]
    h = x * 1.0
    step = rt.zeros([])
    while step < x[0]:
        step = step + 1.0
        if h.sum() > 1.0:
            j = rt.zeros([])
            while j < x[1]:
                j = j + 1.0
                ratios.append(1.5)
                ratios.append(True)
        h = h + len(ratios)
    return h, len(ratios), sum(ratios), ratios


def gated_ratios_ref(xv):
    ratios, h = [0.5], xv.astype("float32")
    for _ in range(trips(xv[0])):
        if h.sum() > 1.0:
            ratios += [1.5, True] * trips(xv[1])
        h = h + np.float32(len(ratios))
    return h, len(ratios), sum(ratios), ratios


def check(fn, ref):
    static = d2s.to_static(fn)
    for xv in INPUTS:
        xv = np.array(xv, "float32")
        x = rt.to_tensor(xv)
        want = ref(xv)
        for got in (fn(x), static(x)):
            np.testing.assert_allclose(got[0].numpy(), want[0])
            assert repr(got[1:]) == repr(want[1:])  # (values and each item's Python type)
            assert [type(v) for v in got[3]] == [type(v) for v in want[3]]
    assert len(static.program_cache) == 1


def test_ints_then_floats_grown_by_an_inner_while_and_counted_by_the_outer():
    check(decode_lengths, decode_lengths_ref)


def test_bools_then_floats_grown_by_nested_tensor_ranges():
    check(beam_flags, beam_flags_ref)


def test_floats_then_bools_grown_by_a_loop_in_a_tensor_if_in_a_loop():
    check(gated_ratios, gated_ratios_ref)


class Decoder:
    def __init__(self):
        self.history = [0]

    def forward(self, x):
        h = x * 1.0
        step = rt.zeros([])
        while step < x[0]:
            step = step + 1.0
            j = rt.zeros([])
            while j < x[1]:
                j = j + 1.0
                self.history.append(2)
                self.history.append(0.5)
            h = h + len(self.history)
        return h


def test_an_attribute_list_grown_in_nested_loops_is_written_back_with_its_types():
    for xv in INPUTS:
        eager, converted = Decoder(), Decoder()
        static = d2s.to_static(converted.forward)
        x = rt.to_tensor(np.array(xv, "float32"))
        want, got = eager.forward(x), static(x)
        np.testing.assert_allclose(got.numpy(), want.numpy())
        assert repr(converted.history) == repr(eager.history)
        assert converted.history == [0] + [2, 0.5] * trips(xv[0]) * trips(xv[1])
