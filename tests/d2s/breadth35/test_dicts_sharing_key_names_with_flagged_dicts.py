"""A dict that only shares key names with a dict whose keys a tensor `if` sets (a metrics dict
built from a loss dict) has its own key order: returning or iterating it converts. The key
order check (`key_flags.check_order`) once refused it as if the key had been set again in the
flagged dict. A copy of the flagged dict whose key is set again is still refused."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

F = rt.nn.functional


def losses_and_metrics(pred, target, aux):
    losses = {"main": F.mse_loss(pred, target)}
    if aux.sum() > 0:
        losses["aux"] = (aux * pred).mean()
    total = sum(losses.values())
    metrics = {"main": losses["main"].item(),
               "aux": losses.get("aux", rt.zeros([])).item(),
               "total": total.item()}
    names = [k for k in metrics]
    return metrics, names, "aux" in losses


def _ref(pred, target, aux):
    main = float(((pred - target) ** 2).mean())
    a = float((aux * pred).mean()) if aux.sum() > 0 else 0.0
    return {"main": main, "aux": a, "total": main + a}, ["main", "aux", "total"], aux.sum() > 0


def test_metrics_dict_beside_a_loss_dict_with_a_key_on_some_paths():
    converted = d2s.to_static(losses_and_metrics)
    rng = np.random.default_rng(0)
    pred, target = rng.standard_normal((2, 4)).astype("float32")
    for aux in (np.ones(4, "float32"), np.zeros(4, "float32")):
        args = [rt.to_tensor(a) for a in (pred, target, aux)]
        eager, static = losses_and_metrics(*args), converted(*args)
        ref = _ref(pred, target, aux)
        assert list(static[0]) == list(eager[0]) == list(ref[0])
        for k in ref[0]:
            assert type(static[0][k]) is float
            np.testing.assert_allclose(static[0][k], eager[0][k], rtol=1e-6)
            np.testing.assert_allclose(static[0][k], ref[0][k], rtol=1e-5, atol=1e-7)
        assert static[1] == eager[1] == ref[1] and static[2] is eager[2] is bool(ref[2])
    assert len(converted.program_cache) == 1


def test_a_copy_of_the_flagged_dict_with_the_key_set_again_is_still_refused():
    def fn(x):
        d = {"a": x * 2}
        if x.sum() > 0:
            d["b"] = x + 1
        e = dict(d)
        e["b"] = x - 1  # (at the end where d had no "b", in its place where it had)
        e["c"] = x
        return [k for k in e]

    with pytest.raises(d2s.ConversionError, match="reads the order of the keys"):
        d2s.to_static(fn)(rt.to_tensor(np.ones(2, "float32")))
