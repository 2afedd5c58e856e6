"""Eager Layers, converted Layers, StaticFunctions and loaded models pickle: the copy has the
same parameters (its state dict travels) and gives the same answers; programs, compiled code
and caches are not pickled but traced again on the copy's first call. Each round-trips
through `pickle` and through a `multiprocessing` worker started with the spawn method."""
from __future__ import annotations

import multiprocessing
import pickle

import numpy as np
import pytest

import d2s
import runtime as rt
from examples.models import LeNet

from . import pickle_work

X = np.random.default_rng(0).standard_normal((2, 1, 8, 8)).astype("float32")
X4 = np.random.default_rng(1).standard_normal((3, 4)).astype("float32")


def _lenet():
    rt.seed(0)
    return LeNet(image_size=8).eval()


def _objects(tmp_path) -> dict:
    """name -> (object, its input)"""
    converted = d2s.to_static(_lenet())
    pickle_work.call(converted, X)  # traced and compiled before pickling
    decorated = pickle_work.Decorated().eval()
    pickle_work.call(decorated, X4)
    d2s.save(_lenet(), str(tmp_path / "lenet"), input_spec=[d2s.InputSpec([None, 1, 8, 8])])
    return {"eager Layer": (_lenet(), X), "converted Layer": (converted, X),
            "decorated forward": (decorated, X4),
            "StaticFunction": (pickle_work.scaled_tanh, X4),
            "to_static of a function": (d2s.to_static(pickle_work.scaled_tanh.__wrapped__),
                                        X4),
            "loaded model": (d2s.load(str(tmp_path / "lenet")), X)}


def _state(obj) -> dict:
    layer = obj if isinstance(obj, rt.nn.Layer) else None
    return {k: v.numpy() for k, v in layer.state_dict().items()} if layer else {}


def test_pickle_round_trips(tmp_path):
    for name, (obj, x) in _objects(tmp_path).items():
        want = pickle_work.call(obj, x)
        copy = pickle.loads(pickle.dumps(obj))
        assert copy is not obj or name == "StaticFunction", name
        before = _state(obj)
        after = _state(copy)
        assert sorted(before) == sorted(after), name
        for key in before:
            np.testing.assert_array_equal(after[key], before[key], err_msg=f"{name} {key}")
        np.testing.assert_allclose(pickle_work.call(copy, x), want, rtol=1e-6, atol=1e-6,
                                   err_msg=name)


def test_a_converted_layer_is_traced_again_after_unpickling():
    model = d2s.to_static(_lenet())
    want = pickle_work.call(model, X)
    assert len(model.forward.program_cache) == 1
    copy = pickle.loads(pickle.dumps(model))
    assert isinstance(copy.forward, d2s.StaticFunction) and copy.forward.instance is copy
    assert len(copy.forward.program_cache) == 0  # nothing compiled travelled
    np.testing.assert_allclose(pickle_work.call(copy, X), want, rtol=1e-6, atol=1e-6)
    assert len(copy.forward.program_cache) == 1
    copy.fc1.weight.set_value(np.zeros(copy.fc1.weight.shape, "float32"))  # its own weights
    assert not np.allclose(pickle_work.call(copy, X), want)
    np.testing.assert_allclose(pickle_work.call(model, X), want, rtol=1e-6, atol=1e-6)
    assert copy.forward.rollback() is not None and "forward" not in copy.__dict__


def test_a_decorated_module_function_unpickles_as_itself():
    assert pickle.loads(pickle.dumps(pickle_work.scaled_tanh)) is pickle_work.scaled_tanh


@pytest.mark.slow
def test_each_round_trips_through_a_spawned_worker(tmp_path):
    objects = _objects(tmp_path)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        for name, (obj, x) in objects.items():
            want = pickle_work.call(obj, x)
            got = pool.apply(pickle_work.call, (obj, x))
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)
