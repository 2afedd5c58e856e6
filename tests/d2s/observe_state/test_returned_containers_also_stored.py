"""A list or dict the converted call makes, stores where the caller can reach it (`self.`,
an argument's item) and returns is one object after the call, as eager code has it: `r is
m.hist`, and a change made to the returned list shows in the stored one. Before, the result
was rebuilt from the program's outputs apart from the object written back (`r is m.hist`
False; `r.append(...)` left `m.hist` as it was), also for containers of Python values only
(written back by the replayed effects) and for one container returned twice (`return out,
out`)."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

INPUTS = [[1.0, 2.0, -0.5], [-1.0, -2.0, 0.5], [0.5, 4.0, 1.0], [-3.0, 2.0, -0.5]]


def tensors(data):
    return rt.to_tensor(np.array(data, "float32"))


class History(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)
        self.hist = []
        self.cache = None
        self.last = None

    def forward(self, x):
        h = self.fc(x)
        y = h.sum() if h.mean() > 0 else -h.max()  # (a tensor `if`: both paths, one program)
        self.hist = (self.hist + [y])[-2:]  # (a window of the last two)
        self.cache = {"k": h, "tags": ["seen"]}
        out = []
        self.last = out
        out.append(y * 2.0)
        return self.hist, self.cache, out


def _reference(m, data, hist_len):
    h = np.array(data, "float32") @ m.fc.weight.numpy() + m.fc.bias.numpy()
    y = h.sum() if h.mean() > 0 else -h.max()
    return h, y, min(hist_len + 1, 2)


def test_a_layers_new_containers_returned_are_the_stored_ones():
    eager_m, static_m = History(), History()
    static_m.set_state_dict(eager_m.state_dict())
    static = d2s.to_static(static_m)
    for n, data in enumerate(INPUTS):
        seen = []
        for m, fn in ((eager_m, eager_m), (static_m, static)):
            hist, cache, out = fn(tensors(data))
            assert hist is m.hist and cache is m.cache and out is m.last
            assert cache["tags"] is m.cache["tags"]
            seen.append((hist, cache, out))
        assert_same_leaves(seen[1], seen[0])
        h, y, length = _reference(static_m, data, n)
        assert len(static_m.hist) == length
        np.testing.assert_allclose(static_m.cache["k"].numpy(), h, rtol=1e-5)
        np.testing.assert_allclose(static_m.last[0].numpy(), y * 2.0, rtol=1e-5)
    for m in (eager_m, static_m):  # (the caller changes what the call returned)
        hist, cache, out = (static if m is static_m else m)(tensors(INPUTS[0]))
        hist.append(rt.to_tensor(0.0))
        cache["extra"] = 1
        out.clear()
        assert len(m.hist) == 3 and m.cache["extra"] == 1 and m.last == []


class Cache(rt.nn.Layer):
    """Python-only containers (written back by replaying the call's effects)."""

    def __init__(self):
        super().__init__()
        self.meta = None
        self.names = []

    def forward(self, x):
        self.meta = {"step": len(self.names), "shape": [int(d) for d in x.shape]}
        self.names = self.names + ["pos" if len(self.names) % 2 == 0 else "neg"]
        y = x * 2.0 if x.mean() > 0 else x - 1.0
        return y, self.meta, self.names


def test_python_containers_stored_and_returned_are_one_object():
    em, sm = Cache(), Cache()
    static = d2s.to_static(sm)
    for data in INPUTS:
        got, want = static(tensors(data)), em(tensors(data))
        assert got[1] is sm.meta and got[2] is sm.names
        assert got[1]["shape"] is sm.meta["shape"]
        assert_same_leaves(got, want)
        x = np.array(data, "float32")
        np.testing.assert_allclose(got[0].numpy(), x * 2.0 if x.mean() > 0 else x - 1.0)
    assert sm.names == em.names == ["pos", "neg", "pos", "neg"]


def keep(x, box):
    made = {"v": [x * 2.0], "n": 0}
    box["made"] = made
    if x.sum() > 0:
        made["v"].append(x + 1.0)
    else:
        made["v"].append(x - 1.0)
    pair = [x.max()]
    return made["v"], box["made"], pair, pair


def test_containers_made_stored_in_an_argument_and_returned_twice():
    static = d2s.to_static(keep)
    for data in INPUTS:
        seen = []
        for fn in (keep, static):
            box = {"old": 1}
            v, made, a, b = fn(tensors(data), box)
            assert made is box["made"] and v is box["made"]["v"] and a is b
            seen.append((box, a))
        assert_same_leaves(seen[1], seen[0])
        x = np.array(data, "float32")
        np.testing.assert_allclose(seen[1][0]["made"]["v"][1].numpy(),
                                   x + 1.0 if x.sum() > 0 else x - 1.0)


class Report(rt.nn.Layer):
    """A dict whose keys a tensor `if` decides, stored and returned (`returned_keys`)."""

    def __init__(self):
        super().__init__()
        self.last = None

    def forward(self, x):
        report = {"base": x.sum()}
        if x.mean() > 0:
            report["pos"] = x * 2.0
        self.last = report
        return report, report


def test_a_dict_of_keys_a_tensor_decides_stored_and_returned_is_one_object():
    em, sm = Report(), Report()
    static = d2s.to_static(sm)
    for data in INPUTS:
        got, want = static(tensors(data)), em(tensors(data))
        assert got[0] is sm.last and got[1] is sm.last
        assert_same_leaves(got, want)
        assert ("pos" in sm.last) is bool(np.mean(data) > 0)
