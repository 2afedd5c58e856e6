"""A FIFO of tensors kept where the caller reaches it (issue 35, "a trace on every call"):
`self.buf.append(h.detach())`, then `self.buf.pop(0)` past a length (a smoothing window, a
MoCo queue, a streaming cache). Each call holds other tensors in the list, and the program
captured the ones its trace found, so every call traced again (1, 2, 3, ... programs, with
correct values). The tensors the call keeps, moves and drops are now read from the list when
the program runs (`writeback_items.Window`), and the list is guarded by its length and its
tensors' shapes and dtypes: one program per length while the FIFO fills, then one program
for every call. After each call the list holds the very tensors eager code leaves there.
So does a window the call rebuilds (`self.buf = self.buf[-2:] + [h]`, `insert(0, h)` then
a slice, a key cache in a dict): the place gets a new list after each call, as eager's.
Inputs take both paths of a tensor `if` in the one program."""
import numpy as np
import pytest

import d2s
import runtime as rt

SIZE = 3
INPUTS = [np.array(v, np.float32) for v in (
    [1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, 0.5], [-0.5, -4.0], [3.0, 1.0],
    [-1.0, 0.0], [0.25, -0.75], [2.0, 2.0])]


class Window(rt.nn.Layer):
    """A window of the last SIZE detached inputs, read by a `for` and at index -1."""

    def __init__(self):
        super().__init__()
        self.buf = []

    def forward(self, x):
        self.buf.append(x.detach() * 2.0)
        if len(self.buf) > SIZE:
            self.buf.pop(0)
        acc = rt.zeros_like(x)
        for t in self.buf:
            acc = acc + t
        if acc.sum() > 0:  # (both paths, one program)
            acc = acc - self.buf[-1]
        return acc / len(self.buf)


def _window_reference(seen):
    kept = [2.0 * v for v in seen[-SIZE:]]
    acc = np.sum(kept, 0)
    if acc.sum() > 0:
        acc = acc - kept[-1]
    return acc / len(kept)


class Queue(rt.nn.Layer):
    """A MoCo-like queue in a dict, changed through an alias and a helper, under no_grad."""

    def __init__(self):
        super().__init__()
        self.state = {"queue": [], "calls": 0}

    def forward(self, x):
        q = self.state["queue"]
        _enqueue(q, x.mean(0, keepdim=True))
        return rt.concat(q, 0).max(0) + x


def _enqueue(q, k):
    q.append(k)
    while len(q) > SIZE:
        del q[0]


def _run(make, reference):
    eager_layer, static_layer = make(), make()
    static = d2s.to_static(static_layer)
    seen = []
    for v in INPUTS:
        seen.append(v)
        want = eager_layer(rt.to_tensor(v))
        got = static(rt.to_tensor(v))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), reference(seen), rtol=1e-6)
        assert got.dtype == want.dtype and got.stop_gradient == want.stop_gradient
        yield eager_layer, static_layer, static


def test_a_window_on_self_reuses_one_program_at_its_length():
    made = []
    for eager_layer, static_layer, static in _run(Window, _window_reference):
        assert len(static_layer.buf) == len(eager_layer.buf)
        for a, b in zip(static_layer.buf, eager_layer.buf, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert type(a) is type(b) and a.stop_gradient == b.stop_gradient
        made.append(static_layer.buf[-1])
        # the tensors eager code leaves there: those the latest calls appended, themselves
        assert all(a is b for a, b in zip(static_layer.buf, made[-len(static_layer.buf):]))
    assert static.forward.get_traced_count() == SIZE + 1  # (lengths 0, 1, 2, then 3 from then on)


def test_a_reference_kept_by_the_caller_keeps_its_value():
    static_layer = Window()
    static = d2s.to_static(static_layer)
    for v in INPUTS[:5]:
        static(rt.to_tensor(v))
    kept = static_layer.buf[0]
    before = kept.numpy().copy()
    static(rt.to_tensor(INPUTS[5]))
    np.testing.assert_array_equal(kept.numpy(), before)
    assert all(t is not kept for t in static_layer.buf)


def _queue_reference(seen):
    means = [v.mean(0, keepdims=True) for v in seen[-SIZE:]]
    return np.concatenate(means, 0).max(0) + seen[-1]


def test_a_queue_in_a_dict_changed_by_a_helper_under_no_grad():
    with rt.no_grad():
        for eager_layer, static_layer, static in _run(Queue, _queue_reference):
            got, want = static_layer.state["queue"], eager_layer.state["queue"]
            assert [t.numpy().tolist() for t in got] == [t.numpy().tolist() for t in want]
    assert static.forward.get_traced_count() == SIZE + 1


def test_tensors_of_another_shape_trace_again():
    static_layer = Window()
    static = d2s.to_static(static_layer)
    for v in INPUTS[:5]:
        static(rt.to_tensor(v))
    static_layer.buf = [rt.to_tensor(np.full(3, k, np.float32)) for k in range(SIZE)]
    got = static(rt.to_tensor(np.array([1.0, 2.0, 3.0], np.float32)))
    want = _window_reference([np.full(3, k / 2, np.float32) for k in range(1, SIZE)] +
                             [np.array([1.0, 2.0, 3.0], np.float32)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert static.forward.get_traced_count() == SIZE + 2


@pytest.mark.parametrize("alias", ["returned", "attribute"])
def test_a_tensor_also_held_elsewhere_is_read_as_that_tensor(alias):
    """A tensor of the list that the call also returns or stores at another place: that
    place must get the list's tensor of each call (the program keeps reading it by
    identity there, so such a call still traces per call, with eager's values)."""

    class Shared(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.buf = []
            self.oldest = None

        def forward(self, x):
            self.buf.append(x.detach())
            if len(self.buf) > 2:
                self.buf.pop(0)
            if alias == "returned":
                return x + self.buf[0], self.buf[0]
            self.oldest = self.buf[0]
            return x + self.buf[0], None

    eager_layer, static_layer = Shared(), Shared()
    static = d2s.to_static(static_layer)
    for v in INPUTS[:6]:
        want, want_t = eager_layer(rt.to_tensor(v))
        got, got_t = static(rt.to_tensor(v))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if alias == "returned":
            np.testing.assert_array_equal(got_t.numpy(), want_t.numpy())
        else:
            np.testing.assert_array_equal(static_layer.oldest.numpy(),
                                          eager_layer.oldest.numpy())


class Rebuilt(rt.nn.Layer):
    """A window the call rebuilds instead of changing it: `self.buf = self.buf[-2:] + [h]`."""

    def __init__(self):
        super().__init__()
        self.buf = []

    def forward(self, x):
        self.buf = self.buf[-(SIZE - 1):] + [x.detach() * 2.0]
        acc = rt.zeros_like(x)
        for t in self.buf:
            acc = acc + t
        if acc.sum() > 0:
            acc = acc - self.buf[-1]
        return acc / len(self.buf)


class Prepended(rt.nn.Layer):
    """Newest first: `insert(0, h)`, then the list cut to its first SIZE items."""

    def __init__(self):
        super().__init__()
        self.buf = []

    def forward(self, x):
        self.buf.insert(0, x.detach() * 2.0)
        self.buf = self.buf[:SIZE]
        acc = rt.zeros_like(x)
        for t in self.buf:
            acc = acc + t
        if acc.sum() > 0:
            acc = acc - self.buf[0]
        return acc / len(self.buf)


class KeyCache(rt.nn.Layer):
    """A key cache in a dict rebuilt per call, read under a tensor `if`."""

    def __init__(self):
        super().__init__()
        self.cache = {"k": []}

    def forward(self, x):
        self.cache["k"] = (self.cache["k"] + [x.detach() * 2.0])[-SIZE:]
        keys = self.cache["k"]
        acc = rt.zeros_like(x)
        for t in keys:
            acc = acc + t
        if acc.sum() > 0:
            acc = acc - keys[-1]
        return acc / len(keys)


@pytest.mark.parametrize("make", [Rebuilt, Prepended, KeyCache], ids=lambda c: c.__name__)
def test_a_window_rebuilt_by_the_call_reuses_one_program_at_its_length(make):
    def items(layer):
        return layer.cache["k"] if make is KeyCache else layer.buf

    for eager_layer, static_layer, static in _run(make, _window_reference):
        got, want = items(static_layer), items(eager_layer)
        assert type(got) is list and len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert a.stop_gradient == b.stop_gradient
    assert static.forward.get_traced_count() == SIZE + 1


def log_means(x, hist):
    """A list passed in that the function only appends tensors to (a metrics log)."""
    hist.append(x.mean())
    if x.sum() > 0:
        return x * 2.0
    return x - 1.0


def test_a_list_argument_only_appended_to_is_not_keyed_by_its_tensors():
    static = d2s.to_static(log_means)
    got_a, want_a, got_b, want_b = [], [], [], []
    for i, v in enumerate(INPUTS):
        got_list, want_list = (got_a, want_a) if i % 3 else (got_b, want_b)
        want = log_means(rt.to_tensor(v), want_list)
        got = static(rt.to_tensor(v), got_list)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        for got_items, want_items in ((got_a, want_a), (got_b, want_b)):
            assert len(got_items) == len(want_items)
            for a, b in zip(got_items, want_items, strict=True):
                assert type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    fresh = []
    static(rt.to_tensor(INPUTS[0]), fresh)  # (a new list: its own program, then reused)
    static(rt.to_tensor(INPUTS[1]), fresh)
    assert [float(t) for t in fresh] == [float(v.mean()) for v in INPUTS[:2]]
    # (keyed by the list objects, not by the tensors they hold: 3 programs for these 12
    # calls; 6 before, a program per new length)
    assert static.get_traced_count() <= 3
