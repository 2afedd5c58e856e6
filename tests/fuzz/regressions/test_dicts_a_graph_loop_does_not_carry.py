"""A dict that a graph loop's body changes but the `while` op does not carry (found by the
dict-keys fuzzer, seed 32501: "key 'a' of the dict 'd' is set in the if branch only of an if
whose condition is a tensor" where one branch held such a loop).

The loop carries a dict whose values are all tensors or Python numbers; an empty dict, or one
holding a string, is not carried, and the loop's state held a *copy* of it, which the name held
after the loop:
- an alias of the dict (another name, the `if` around the loop) lost it: a key set after the
  loop (`d["z"] = ...`) was missing from the alias (`len(alias)` 0 against eager's 1, `d is
  alias` False: silent), and a key one branch of a tensor `if` set got no presence flag, so the
  `if` was refused;
- a value the body changed (`d["name"] = "b"`) came back changed where the loop ran zero times
  (eager's "a"; silent): now a `StateChangeError` at the loop naming `d['name']`.
The body may set a key and remove it again (`d["tmp"] = v; h = h + d.pop("tmp")`).
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import d2s
import runtime as rt

from .. import GENERATORS, runner


def scratch_key(x):
    """A scratch key set and popped on each trip; the dict and its alias after the loop."""
    cache = {}
    alias = cache
    h = x * 1.0
    i = 0
    while i < rt.sum(x):
        cache["tmp"] = h * 2.0
        h = h + cache.pop("tmp")
        i += 1
    cache["z"] = h * 0.5
    return h, len(alias), cache is alias, sorted(alias)


def scratch_key_np(x):
    trips = max(int(np.ceil(x.sum())), 0)
    h = x.astype(np.float64) * 3.0 ** trips
    return h, 1, True, ["z"]


class Head:
    """A head whose forward keeps the optional output in a dict one tensor branch fills; the
    other branch runs a tensor-length refinement loop with a scratch key."""

    def forward(self, x):
        outs = {}
        h = x * 1.0
        if x[0] > 0.5:
            outs["aux"] = h * 2.0
        else:
            for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
                outs["tmp"] = h * 0.5
                h = h + outs.pop("tmp")
        return h, "aux" in outs, outs.get("aux", h * 0.0), len(outs)


def head_np(x):
    h = x.astype(np.float64)
    if x[0] > 0.5:
        return h, True, h * 2.0, 1
    for _ in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        h = h * 1.5
    return h, False, h * 0.0, 0


@pytest.mark.parametrize("fn, reference, inputs", [
    (scratch_key, scratch_key_np, ([1.0, 2.0], [0.25, 0.5], [-1.0, -2.0])),   # 3, 1, 0 trips
    (Head().forward, head_np, ([0.75, 0.5], [0.25, 1.5], [0.25, -2.0], [-1.0, 0.5])),
])
def test_a_dict_the_loop_does_not_carry_stays_the_same_object(fn, reference, inputs):
    static = d2s.to_static(fn)
    for values in inputs:
        x = np.asarray(values, np.float32)
        want = reference(x)
        for got in (fn(rt.to_tensor(x)), static(rt.to_tensor(x))):
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                if isinstance(w, (bool, int, list)):
                    assert type(g) is type(w) and g == w
                else:
                    np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
    assert len(static.program_cache) == 1


def renamed(x):
    meta = {"name": "a"}
    i = 0
    while i < rt.sum(x):
        meta["name"] = "b"
        i += 1
    return meta["name"]


def test_a_value_of_such_a_dict_changed_in_the_loop_is_a_clear_error():
    assert renamed(rt.to_tensor([-1.0])) == "a" and renamed(rt.to_tensor([1.0])) == "b"
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(renamed)(rt.to_tensor([1.0]))
    msg = str(info.value)
    assert "meta['name'] is changed inside a loop whose condition is a tensor" in msg
    assert "while i < rt.sum(x):" in msg and "holds the str 'a'" in msg


def test_found_case_converts():
    path = pathlib.Path(__file__).parent / "found35" / "dict_keys_pop_in_loop_in_else.txt"
    out = runner.compare_saved(path, GENERATORS["dict-keys"]()[1])
    assert out.kind == "same", str(out)
