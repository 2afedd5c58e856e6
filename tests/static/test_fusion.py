"""Fused elementwise chains give the answers of unfused execution, on every program of the
d2s corpus (fusion forced on its small tensors) and on large hand-written chains."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import fusion, threads
from tests.d2s.corpus.registry import CASES
from tests.d2s.corpus.test_corpus import _call, _make_layer, assert_same

from tests.d2s.corpus import (  # noqa: F401  isort: skip  (registers the cases)
    cases_if, cases_while, cases_for, cases_break_continue, cases_return, cases_logical,
    cases_assert_print_len_cast, cases_list_dict, cases_calls, cases_misc, cases_layers)

FUSED_PROGRAMS = []


@pytest.fixture(autouse=True)
def _numpy_fused_code(monkeypatch):
    """These tests check the fused NumPy code, which is exact; the generated C
    (`test_fusion_native.py`) is compared within float tolerance."""
    monkeypatch.setenv("D2S_NATIVE", "0")


def _run_case(c, monkeypatch, fused: bool):
    # "test": every fusible chain fused, in chunks of 3 elements, over the threads
    monkeypatch.setenv("D2S_FUSION", "test" if fused else "0")
    target = _make_layer(c) if c.is_layer else c.fn
    sf = d2s.to_static(target)
    outs = [_call(sf, args, c.raises)[0] for args in c.args]
    if fused:
        for entry in _entries(sf):
            if " = FU" in entry.compiled.source:
                FUSED_PROGRAMS.append(c.name)
    return outs


def _entries(sf):
    forward = sf.forward if hasattr(sf, "forward") else sf
    cache = forward.program_cache
    return [e for key in cache for e in cache._entries[key]]


@pytest.mark.parametrize("c", [c for c in CASES], ids=[c.name for c in CASES])
def test_fused_and_unfused_agree_on_the_corpus(c, monkeypatch):
    try:
        reference = _run_case(c, monkeypatch, fused=False)
    except Exception:  # noqa: BLE001  (cases the corpus marks as known failures)
        pytest.skip("the case does not convert unfused either (a known corpus failure)")
    fused = _run_case(c, monkeypatch, fused=True)
    for i, (want, got) in enumerate(zip(reference, fused)):
        assert_same(want, got, 1e-6, 1e-7, f"{c.name} call {i}")


def test_some_corpus_programs_were_fused(monkeypatch):
    """(So the comparison above compares something.) Stops at the fifth fused program: going
    through the whole corpus again cost 20 s."""
    FUSED_PROGRAMS.clear()
    for c in CASES:
        if len(set(FUSED_PROGRAMS)) >= 5:
            break
        try:
            _run_case(c, monkeypatch, fused=True)
        except Exception:  # noqa: BLE001, S112  (known corpus failures)
            continue
    assert len(set(FUSED_PROGRAMS)) >= 5, FUSED_PROGRAMS


def chain(x, b):
    y = rt.tanh(x * 0.5 + b) * x
    z = rt.exp(-rt.abs(y)) - 1.0
    return rt.maximum(z, y * y) / 3.0


def test_a_large_chain_is_fused_and_exact_on_one_and_two_threads(monkeypatch):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((1024, 1100)).astype("float32")  # > PARALLEL_ELEMENTS
    ba = rng.standard_normal(1100).astype("float32")
    x, b = rt.to_tensor(xa), rt.to_tensor(ba)
    monkeypatch.setenv("D2S_FUSION", "0")
    with rt.no_grad():
        want = d2s.to_static(chain)(x, b).numpy()
    monkeypatch.setenv("D2S_FUSION", "1")
    for parallel in (fusion.PARALLEL_ELEMENTS, 1 << 62):
        monkeypatch.setattr(fusion, "PARALLEL_ELEMENTS", parallel)
        sf = d2s.to_static(chain)
        with rt.no_grad():
            got = sf(x, b).numpy()
        np.testing.assert_array_equal(got, want)
        assert "FU" in sf.program_cache.last_entry.compiled.source


def test_gradients_through_a_fused_forward_match(monkeypatch):
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((300, 300)).astype("float32")
    ba = rng.standard_normal(300).astype("float32")
    grads = []
    for flag in ("0", "1"):
        monkeypatch.setenv("D2S_FUSION", flag)
        x = rt.to_tensor(xa, stop_gradient=False)
        b = rt.to_tensor(ba, stop_gradient=False)
        d2s.to_static(chain)(x, b).sum().backward()
        grads.append((x.grad.numpy(), b.grad.numpy()))
    for a, bgrad in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(a, bgrad, rtol=1e-6, atol=1e-6)


# ---- row reductions, several outputs, threads -----------------------------------------------

def layer_norm(x, bias, res):
    h = x + bias + res
    mu = h.mean(axis=-1, keepdim=True)
    d = h - mu
    var = rt.mean(d * d, axis=-1, keepdim=True)
    return d / rt.sqrt(var + 1e-5) * 0.5


def adam_like(p, g, m, v):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * (g * g)
    return p - 0.001 * m / (rt.sqrt(v) + 1e-8), m, v


def _np_layer_norm(x, bias, res):
    h = x + bias + res
    d = h - h.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + np.float32(1e-5)) * \
        np.float32(0.5)


def _static(fn, monkeypatch, flag, *args):
    monkeypatch.setenv("D2S_FUSION", flag)
    sf = d2s.to_static(fn)
    with rt.no_grad():
        out = sf(*args)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))], \
        sf.program_cache.last_entry.compiled.source


@pytest.mark.parametrize("n_threads", [1, 2])
def test_layer_norm_is_one_fused_call_equal_to_unfused(monkeypatch, n_threads):
    rng = np.random.default_rng(2)
    xa, ra = (rng.standard_normal((600, 520)).astype("float32") for _ in range(2))
    ba = rng.standard_normal(520).astype("float32")
    args = [rt.to_tensor(a) for a in (xa, ba, ra)]
    want, _ = _static(layer_norm, monkeypatch, "0", *args)
    monkeypatch.setattr(threads, "_threads", n_threads)
    got, src = _static(layer_norm, monkeypatch, "1", *args)
    # the two means, the sqrt and every elementwise op: one call, no kernel left
    assert src.count(" = FU") == 1 and " = K" not in src, src
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[0], _np_layer_norm(xa, ba, ra), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_an_update_with_three_results_is_one_fused_call(monkeypatch, n_threads):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((700, 400)).astype("float32") for _ in range(4)]
    arrays[3] = np.abs(arrays[3])
    args = [rt.to_tensor(a) for a in arrays]
    want, _ = _static(adam_like, monkeypatch, "0", *args)
    monkeypatch.setattr(threads, "_threads", n_threads)
    got, src = _static(adam_like, monkeypatch, "1", *args)
    assert src.count(" = FU") == 1, src
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    p, gr, m, v = arrays
    m2 = np.float32(0.9) * m + np.float32(0.1) * gr
    np.testing.assert_allclose(got[1], m2, rtol=1e-6)


def column_norm(x):
    s = rt.sum(x * x, axis=0, keepdim=True)  # over the rows: cannot be cut into row chunks
    return x / rt.sqrt(s + 1.0) + 1.0


def test_a_reduction_over_the_rows_ends_the_chain(monkeypatch):
    xa = np.random.default_rng(4).standard_normal((600, 300)).astype("float32")
    want, _ = _static(column_norm, monkeypatch, "0", rt.to_tensor(xa))
    got, src = _static(column_norm, monkeypatch, "test", rt.to_tensor(xa))
    assert " = K" in src  # the sum is its kernel's call
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(
        got[0], xa / np.sqrt((xa * xa).sum(0, keepdims=True) + 1) + 1, rtol=1e-5)


def test_layer_norm_gradients_through_the_fused_forward(monkeypatch):
    from tests.finite_differences import numeric_grad
    rng = np.random.default_rng(5)
    xa = rng.standard_normal((4, 6)).astype("float64")
    ba, ra = rng.standard_normal(6), rng.standard_normal((4, 6))
    monkeypatch.setenv("D2S_FUSION", "test")
    sf = d2s.to_static(layer_norm)
    x = rt.to_tensor(xa, stop_gradient=False)
    b = rt.to_tensor(ba, stop_gradient=False)
    (sf(x, b, rt.to_tensor(ra)) ** 3).sum().backward()
    assert " = FU" in sf.program_cache.last_entry.compiled.source

    def f(xv):
        return float((_np_layer_norm(xv, ba, ra) ** 3).sum())

    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, xa), rtol=1e-4, atol=1e-6)


def logs(x):
    return rt.log(x * 2.0 - 1.0) + 1.0


@pytest.mark.parametrize("n_threads", [1, 2])
def test_floating_point_errors_follow_the_callers_errstate_on_every_thread(
        monkeypatch, n_threads):
    monkeypatch.setattr(threads, "_threads", n_threads)
    monkeypatch.setenv("D2S_FUSION", "test")
    x = rt.to_tensor(np.linspace(-1, 1, 4000).astype("float32").reshape(200, 20))
    sf = d2s.to_static(logs)
    with rt.no_grad(), np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError) as err:
            sf(x)
    # the failing op inside the fused chain, and the user's line
    text = "\n".join([str(err.value)] + getattr(err.value, "__notes__", []))
    assert "While running op: %t2: f32[200,20] = log(%t1)" in text, text
    assert "return rt.log(x * 2.0 - 1.0) + 1.0" in text, text
    with rt.no_grad(), np.errstate(invalid="ignore"):
        got = sf(x).numpy()
    with np.errstate(invalid="ignore"):
        want = np.log(x.numpy() * 2 - 1) + 1
    np.testing.assert_array_equal(got, want)


def test_thread_count_setting_and_environment(monkeypatch):
    old = threads.num_threads()
    try:
        threads.set_num_threads(1)
        assert threads.num_threads() == 1
        with pytest.raises(ValueError, match="positive int"):
            threads.set_num_threads(0)
    finally:
        threads.set_num_threads(old)
    monkeypatch.setenv("D2S_NUM_THREADS", "3")
    assert threads._default_threads() == 3
    monkeypatch.setenv("D2S_NUM_THREADS", "two")
    with pytest.raises(ValueError, match="D2S_NUM_THREADS"):
        threads._default_threads()
    monkeypatch.delenv("D2S_NUM_THREADS")
    assert threads._default_threads() >= 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_low_and_high_precision_chains_are_equal_to_unfused(monkeypatch, dtype):
    rng = np.random.default_rng(6)
    x = rt.cast(rt.to_tensor(rng.standard_normal((64, 40)).astype("float32")), dtype)
    b = rt.cast(rt.to_tensor(rng.standard_normal(40).astype("float32")), dtype)
    want, _ = _static(chain, monkeypatch, "0", x, b)
    got, src = _static(chain, monkeypatch, "test", x, b)
    assert " = FU" in src
    np.testing.assert_array_equal(got[0].astype("float32"), want[0].astype("float32"))


def transposed_chain(x):
    t = rt.transpose(x, [1, 0])  # a strided view: its rows are not contiguous
    return rt.tanh(t * 2.0 + 1.0) - rt.mean(t, axis=-1, keepdim=True)


def test_a_strided_input_is_read_chunk_by_chunk(monkeypatch):
    xa = np.random.default_rng(7).standard_normal((30, 50)).astype("float32")
    want, _ = _static(transposed_chain, monkeypatch, "0", rt.to_tensor(xa))
    got, src = _static(transposed_chain, monkeypatch, "test", rt.to_tensor(xa))
    assert " = FU" in src
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[0], np.tanh(xa.T * 2 + 1) - xa.T.mean(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


def ln_3d(x, pos, b):
    h = x + pos + b  # pos: [1, T, C] broadcasts over the batch only
    d = h - rt.mean(h, axis=-1, keepdim=True)
    return d / rt.sqrt(rt.mean(d * d, axis=-1).unsqueeze(-1) + 1e-5)


def ln_flat(x, b):
    h = x + b
    d = h - rt.mean(h, axis=-1, keepdim=True)
    return d / rt.sqrt(rt.mean(d * d, axis=-1, keepdim=True) + 1e-5)


def test_leading_axes_are_chunked_as_one_where_nothing_broadcasts_over_them(monkeypatch):
    rng = np.random.default_rng(8)
    xa = rng.standard_normal((2, 160, 400)).astype("float32")
    ba = rng.standard_normal(400).astype("float32")
    pa = rng.standard_normal((1, 160, 400)).astype("float32")
    assert fusion.merged_axes  # (the helper the generated code's shapes come from)
    for fn, arrays in ((ln_flat, (xa, ba)), (ln_3d, (xa, pa, ba))):
        args = [rt.to_tensor(a) for a in arrays]
        want, _ = _static(fn, monkeypatch, "0", *args)
        got, src = _static(fn, monkeypatch, "1", *args)
        assert " = FU" in src
        np.testing.assert_array_equal(got[0], want[0])
        entry_src = "\n".join(
            "".join(v[2]) for k, v in __import__("linecache").cache.items()
            if "fused chain" in str(k))
        assert "reshape((320, 400))" in entry_src  # ln_flat: [2, 160] chunked as 320 rows
