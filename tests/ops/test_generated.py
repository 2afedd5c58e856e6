"""Op tests generated from the OpInfos in `tests/ops/opinfo_*.py` (see `opinfo.py`).

For every op: eager values vs the NumPy reference per dtype (and on CuPy with `-m gpu`),
result dtype and shape vs the infer rule of every op the call binds, gradients vs central
finite differences in float64, error inputs, static vs eager (values and gradients), and a
coverage check that every registered op is described or explicitly exempt.
"""
from __future__ import annotations

import contextlib
import importlib
import pathlib
import sys

import numpy as np
import pytest

import runtime as rt
from runtime import static
from runtime.ops import registry

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

from opinfo import EXEMPT, grad_positions

MODULES = [importlib.import_module(p.stem) for p in sorted(HERE.glob("opinfo_*.py"))]
OPINFOS = [info for m in MODULES for info in m.OPINFOS]
EXEMPT = {**EXEMPT, **{k: v for m in MODULES for k, v in getattr(m, "EXEMPT", {}).items()}}
BY_DTYPE = [(info, dt) for info in OPINFOS for dt in info.dtypes]
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


# ---- helpers -------------------------------------------------------------------------------

def cast_args(args, dtype):
    """Floating arrays take the dtype under test; int/bool arrays and scalars are kept."""
    def one(a):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return a.astype(dtype)
        if isinstance(a, list):
            return [one(x) for x in a]
        return a
    return tuple(one(a) for a in args)


def to_tensors(args, stop_gradient=True, positions=()):
    def one(i, a):
        if isinstance(a, np.ndarray):
            return rt.to_tensor(a, stop_gradient=stop_gradient and i not in positions)
        if isinstance(a, list):
            return [one(-1, x) for x in a]
        return a
    return tuple(one(i, a) for i, a in enumerate(args))


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def to_numpy(x):
    return x.numpy() if isinstance(x, rt.Tensor) else np.asarray(x)


@contextlib.contextmanager
def checking_infer(failures: list):
    """Wrap every kernel so that each op the call binds has its eager outputs compared with
    what its infer rule predicts (dtype and exact shape)."""
    saved = {}

    def wrapped(op, kernel):
        def run(xp, *arrays, **attrs):
            out = kernel(xp, *arrays, **attrs)
            metas = registry.infer_outputs(op, [_host(a) for a in arrays], attrs)
            outs = out if isinstance(out, tuple) else (out,)
            for k, (o, m) in enumerate(zip(outs, metas)):
                got = (tuple(o.shape), np.dtype(o.dtype))
                want = (tuple(m.shape), m.dtype.np)
                if got != want:
                    failures.append(f"{op.name} output {k}: kernel gave {got}, infer {want}")
            return out
        return run

    for op in registry.OPS.values():
        saved[op] = op.kernel
        op.kernel = wrapped(op, op.kernel)
    try:
        yield
    finally:
        for op, kernel in saved.items():
            op.kernel = kernel


def _host(a):
    if isinstance(a, list):
        return [_host(x) for x in a]
    if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.ndarray):
        return rt.backend.to_numpy(a)
    return a


def _tol(info, dtype, which):
    table = info.rtol if which == "r" else info.atol
    return table.get(dtype, 1e-5)


def check_close(info, dtype, got, want, what):
    got, want = as_list(got), as_list(want)
    assert len(got) == len(want), f"{info.name}: {len(got)} outputs, reference has {len(want)}"
    for g, w in zip(got, want, strict=True):
        g, w = to_numpy(g), np.asarray(w)
        assert g.shape == w.shape, f"{info.name} {what}: shape {g.shape}, reference {w.shape}"
        if w.dtype.kind in "biu" or g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=f"{info.name} {what}")
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=_tol(info, dtype, "r"), atol=_tol(info, dtype, "a"),
                                       err_msg=f"{info.name} {what}")


def cotangents(rng, outs):
    return [rng.standard_normal(to_numpy(o).shape) for o in outs]


def numeric_grad(info, args, kwargs, pos, ws, eps=1e-6):
    """Central differences of sum(ref(args) * w) with respect to argument `pos`."""
    def f(a):
        call = list(args)
        call[pos] = a
        outs = as_list(info.ref(*call, **kwargs))
        return sum(float(np.sum(np.asarray(o, dtype=np.float64) * w))
                   for o, w in zip(outs, ws) if w is not None)

    x = args[pos].astype(np.float64)
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f(x)
        flat[i] = old - eps
        lo = f(x)
        flat[i] = old
        gflat[i] = (hi - lo) / (2 * eps)
    return g


def float_outputs(outs):
    return [o if isinstance(o, rt.Tensor) and o.dtype.is_floating and not o.stop_gradient
            else None for o in outs]


def eager_grads(info, args, kwargs, positions, ws):
    tensors = to_tensors(args, positions=positions)
    outs = float_outputs(as_list(info.fn(*tensors, **kwargs)))
    pairs = [(o, rt.to_tensor(w)) for o, w in zip(outs, ws) if o is not None and w is not None]
    if not pairs:
        return [np.zeros_like(args[p]) for p in positions]
    got = rt.grad([o for o, _ in pairs], [tensors[p] for p in positions],
                  grad_outputs=[w for _, w in pairs], allow_unused=True)
    return [np.zeros_like(args[p]) if g is None else g.numpy() for p, g in zip(positions, got)]


# ---- the tests -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info,dtype", BY_DTYPE, ids=[f"{i.name}-{d}" for i, d in BY_DTYPE])
def test_values_match_reference(info, dtype, device):
    rt.set_device(device)
    failures: list = []
    for sample in info.samples(np.random.default_rng(0)):
        args = cast_args(sample.args, dtype)
        with checking_infer(failures):
            got = info.fn(*to_tensors(args), **sample.kwargs)
        check_close(info, dtype, got, info.ref(*args, **sample.kwargs), f"{sample!r}")
    assert not failures, "\n".join(failures)


GRAD_INFOS = [i for i in OPINFOS if i.grad is not False]


def grad_samples(info):
    """(sample, float64 args, differentiable positions, output cotangents) for each sample
    with a gradient to check; the cotangent of a non-float output is None."""
    rng = np.random.default_rng(1)
    for sample in info.samples(np.random.default_rng(0)):
        args = cast_args(sample.args, "float64")
        positions = grad_positions(info, args)
        if not sample.grad or not positions:
            continue
        outs = as_list(info.fn(*to_tensors(args), **sample.kwargs))
        ws = [w if o.dtype.is_floating else None for w, o in zip(cotangents(rng, outs), outs)]
        yield sample, args, positions, ws


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info", GRAD_INFOS, ids=[i.name for i in GRAD_INFOS])
def test_gradients_match_finite_differences(info, device):
    rt.set_device(device)
    checked = 0
    for sample, args, positions, ws in grad_samples(info):
        got = eager_grads(info, args, sample.kwargs, positions, ws)
        for p, g in zip(positions, got, strict=True):
            want = numeric_grad(info, args, sample.kwargs, p, ws)
            np.testing.assert_allclose(g, want, rtol=info.grad_tol, atol=info.grad_tol,
                                       err_msg=f"{info.name} d/d(arg {p}) {sample!r}")
            checked += 1
    assert checked, f"{info.name}: no sample had a differentiable argument"


ERROR_INFOS = [i for i in OPINFOS if i.error_samples]


@pytest.mark.parametrize("info", ERROR_INFOS, ids=[i.name for i in ERROR_INFOS])
def test_error_inputs(info):
    for es in info.error_samples:
        with pytest.raises(es.exc, match=es.match):
            info.fn(*to_tensors(es.args), **es.kwargs)


STATIC_ERROR_INFOS = [i for i in ERROR_INFOS if i.static]


@pytest.mark.parametrize("info", STATIC_ERROR_INFOS, ids=[i.name for i in STATIC_ERROR_INFOS])
def test_error_inputs_static(info):
    """Building a program from the same bad call fails the same way (the infer rule speaks)."""
    for es in info.error_samples:
        with pytest.raises(es.exc, match=es.match):
            run_static(info, es.args, es.kwargs)


def test_every_registered_op_is_described_or_exempt():
    described = {i.name for i in OPINFOS} | {c for i in OPINFOS for c in i.covers}
    missing = sorted(set(registry.OPS) - described - set(EXEMPT))
    assert not missing, f"ops with neither an OpInfo nor an EXEMPT entry: {missing}"
    stale = sorted(n for n in EXEMPT if n not in registry.OPS)  # (`in` also finds, and
    # registers, the ops of a module loaded on first use: `registry.REGISTERED_BY`)
    assert not stale, f"EXEMPT names ops that are not registered: {stale}"
    assert all(isinstance(r, str) and r for r in EXEMPT.values())


# ---- static mode ----------------------------------------------------------------------------

def run_static(info, args, kwargs, positions=(), ws=None):
    """Build a program from the same call, run it, return (outputs, grads of `positions`)."""
    main = static.Program()
    feed = {}

    def placeholder(a, name):
        v = static.data(name, list(a.shape), str(a.dtype))
        feed[name] = a
        return v

    with static.program_guard(main):
        sym = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                v = placeholder(a, f"arg{i}")
                v.stop_gradient = i not in positions
                sym.append(v)
            elif isinstance(a, list):
                sym.append([placeholder(x, f"arg{i}_{j}") if isinstance(x, np.ndarray) else x
                            for j, x in enumerate(a)])
            else:
                sym.append(a)
        outs = as_list(info.fn(*sym, **kwargs))
        fetch = list(outs)
        if positions:
            terms = [rt.sum(o * placeholder(w, f"w{k}"))
                     for k, (o, w) in enumerate(zip(outs, ws)) if w is not None]
            loss = terms[0]
            for t in terms[1:]:
                loss = loss + t
            fetch += list(static.gradients([loss], [sym[p] for p in positions]))
    res = static.Executor().run(main, feed=feed, fetch_list=fetch)
    return res[:len(outs)], res[len(outs):]


STATIC_INFOS = [i for i in OPINFOS if i.static]
STATIC_GRAD_INFOS = [i for i in STATIC_INFOS if i.grad is not False]


@pytest.mark.parametrize("info", STATIC_INFOS, ids=[i.name for i in STATIC_INFOS])
def test_static_values_match_eager(info):
    for sample in info.samples(np.random.default_rng(0)):
        args = cast_args(sample.args, "float64")
        eager = as_list(info.fn(*to_tensors(args), **sample.kwargs))
        got, _ = run_static(info, args, sample.kwargs)
        check_close(info, "float64", got, [o.numpy() for o in eager], f"static {sample!r}")


@pytest.mark.parametrize("info", STATIC_GRAD_INFOS, ids=[i.name for i in STATIC_GRAD_INFOS])
def test_static_gradients_match_eager(info):
    for sample, args, positions, ws in grad_samples(info):
        if not any(w is not None for w in ws):
            continue
        _, grads = run_static(info, args, sample.kwargs, positions, ws)
        want = eager_grads(info, args, sample.kwargs, positions, ws)
        for p, g, w in zip(positions, grads, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-9,
                                       err_msg=f"{info.name} static d/d(arg {p}) {sample!r}")


# ---- unknown dims ---------------------------------------------------------------------------

def _unknown(meta):
    """The same Meta with every dim unknown (-1), as static mode sees a batch-free InputSpec."""
    if isinstance(meta, list):
        return [_unknown(m) for m in meta]
    if isinstance(meta, registry.Meta):
        return registry.Meta(tuple(-1 for _ in meta.shape), meta.dtype)
    return meta


# op -> diagnosis; strict, so a fix makes the test fail until the entry is removed
UNKNOWN_DIMS_KNOWN_BUGS: dict = {}


@pytest.mark.parametrize("info", [
    pytest.param(i, marks=pytest.mark.xfail(reason=UNKNOWN_DIMS_KNOWN_BUGS[i.name], strict=True))
    if i.name in UNKNOWN_DIMS_KNOWN_BUGS else i for i in OPINFOS], ids=[i.name for i in OPINFOS])
def test_infer_rules_accept_unknown_dims(info):
    """Infer rules given -1 dims either refuse clearly or agree with eager where they know."""
    calls = []

    def spy(op, kernel):
        def run(xp, *arrays, **attrs):
            out = kernel(xp, *arrays, **attrs)
            calls.append((op, [registry.meta_of(_host(a)) for a in arrays], attrs, out))
            return out
        return run

    saved = {op: op.kernel for op in registry.OPS.values()}
    for op in saved:
        op.kernel = spy(op, op.kernel)
    try:
        for sample in info.samples(np.random.default_rng(0)):
            info.fn(*to_tensors(cast_args(sample.args, "float64")), **sample.kwargs)
    finally:
        for op, kernel in saved.items():
            op.kernel = kernel
    for op, metas, attrs, out in calls:
        try:
            got = op.infer(*[_unknown(m) for m in metas], **attrs)
        except (registry.OpError, registry.OpTypeError) as e:
            # refusing is allowed (e.g. a dim that decides the output rank) if it says why
            assert str(e).startswith(f"{op.name}:"), f"{op.name}: unclear error {e}"
            continue
        got = got if isinstance(got, tuple) and not isinstance(got, registry.Meta) else (got,)
        outs = out if isinstance(out, tuple) else (out,)
        for m, o in zip(got, outs, strict=True):
            assert m.dtype.np == np.dtype(o.dtype), f"{op.name}: dtype {m.dtype} vs {o.dtype}"
            assert len(m.shape) == np.ndim(o), f"{op.name}: rank of {m.shape} vs {np.shape(o)}"
            assert all(d in (-1, e) for d, e in zip(m.shape, np.shape(o), strict=True)), (
                f"{op.name}: inferred {m.shape} with unknown input dims, eager gave "
                f"{np.shape(o)}")
