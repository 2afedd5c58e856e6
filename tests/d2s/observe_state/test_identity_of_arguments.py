"""`id()` and `hash()` in converted code of what the call was given. A program serves the
calls passing other containers of one structure (and is traced with a copy of a list or dict
holding tensors), so `id(metrics)` would be the traced object's number on every call (before:
the copy's, `id(cfg) == id(caller's cfg)` False on every call, silently). It is refused at the
line; `hash()` of data and `id()` of what the Layer holds keep eager's values."""
import numpy as np
import pytest

import d2s
import runtime as rt


class Box:
    def __init__(self, n):
        self.n = n


def keyed(x, cfg):
    if x.sum() > 0:
        y = x * cfg["w"]
    else:
        y = x - cfg["w"]
    return y, id(cfg)


def hashed(x, box):
    return x + 1.0, hash(box)


def test_id_of_an_argument_is_refused_at_the_line():
    static = d2s.to_static(keyed)
    cfg = {"w": rt.to_tensor(np.full(3, 2.0, "float32"))}
    with pytest.raises(d2s.ConversionError, match=r"id\(\) of a dict .*line \d+: +return y, "
                                                   r"id\(cfg\)"):
        static(rt.to_tensor(np.ones(3, "float32")), cfg)


def test_hash_by_identity_of_an_argument_is_refused_at_the_line():
    static = d2s.to_static(hashed)
    with pytest.raises(d2s.ConversionError, match=r"hash\(\) of a Box .*line "
                                                   r"\d+: +return x \+ 1\.0, hash\(box\)"):
        static(rt.to_tensor(np.ones(3, "float32")), Box(1))


class Router(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = rt.nn.Linear(3, 3)
        self.b = rt.nn.Linear(3, 3)
        self.calls = {}

    def forward(self, x, key):
        layer = self.a if key[0] == "a" else self.b
        self.calls[id(layer)] = self.calls.get(id(layer), 0) + 1
        h = layer(x)
        if h.mean() > 0:
            h = h * 2.0
        return h, hash(key) % 97


def test_hash_of_data_and_id_of_the_layers_own_objects_are_eagers():
    eager, conv = Router(), Router()
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    rng = np.random.default_rng(0)
    for key in [("a", 1), ("b", 2), ("a", 1), ("b", 2), ("a", 1)]:
        x = rng.normal(size=(2, 3)).astype("float32")
        (he, ke), (hs, ks) = eager(rt.to_tensor(x), key), static(rt.to_tensor(x), key)
        np.testing.assert_allclose(hs.numpy(), he.numpy(), rtol=1e-5, atol=1e-6)
        assert ks == ke == hash(key) % 97 and type(ks) is int
    assert sorted(conv.calls.values()) == sorted(eager.calls.values()) == [2, 3]
    assert set(conv.calls) == {id(conv.a), id(conv.b)}
