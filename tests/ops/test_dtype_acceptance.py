"""Integer and bool inputs: every op of the OpInfos, called eagerly and inside a converted
function, has the same outcome: the same values and dtypes, or an exception of the same class
(relu of an int64 tensor raises in both, as Paddle's kernels refuse it; an int64 sum runs in
both). The floating arrays of each op's first sample become int32, int64 or bool arrays."""
from __future__ import annotations

import contextlib
import io
import sys
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.ops.registry import OpTypeError

from test_generated import STATIC_INFOS, as_list, to_tensors  # isort: skip  (tests/ops on path)

EXACT = ("int32", "int64", "bool")


def as_exact(a, dtype: str):
    """`a` with its floating arrays turned into `dtype` (bool: the positive entries)."""
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # (NaN and inf samples: any integer will do)
            return a > 0 if dtype == "bool" else np.round(a * 3).astype(dtype)
    if isinstance(a, (list, tuple)):
        return type(a)(as_exact(x, dtype) for x in a)
    return a


def apply(call, *tensors):
    return call(*tensors)


STATIC_APPLY = d2s.to_static(apply)


def outcome(fn, args):
    """('ok', [(dtype, values) per output]) or ('raises', the exception's class)."""
    rt.seed(0)
    tensors = to_tensors(args)  # (fresh: some ops write their input in place)
    arrays = [i for i, a in enumerate(args) if isinstance(a, (np.ndarray, list))]
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            out = fn(*[tensors[i] for i in arrays])
    except Exception as e:  # noqa: BLE001  (what is compared is the exception's class)
        return "raises", type(e)
    return "ok", [(o.dtype.name, o.numpy()) if isinstance(o, rt.Tensor) else (type(o), o)
                  for o in as_list(out)]


def op_call(info, sample, args):
    """The op applied to the sample's arrays (its other arguments fixed)."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, (np.ndarray, list))]

    def call(*tensors):
        full = list(args)
        for i, t in zip(arrays, tensors, strict=True):
            full[i] = t
        return info.fn(*full, **sample.kwargs)

    return call


def _params():
    out = []
    for info in STATIC_INFOS:
        samples = info.samples(np.random.default_rng(0))
        if samples and any(isinstance(a, np.ndarray) and a.dtype.kind == "f"
                           for a in samples[0].args):
            out.append(pytest.param(info, samples[0], id=info.name))
    return out


@pytest.mark.parametrize("info,sample", _params())
def test_exact_inputs_same_outcome_eager_and_converted(info, sample):
    for dtype in EXACT:
        args = as_exact(sample.args, dtype)
        call = op_call(info, sample, args)
        eager = outcome(call, args)
        static = outcome(lambda *ts: STATIC_APPLY(call, *ts), args)  # noqa: B023
        what = f"{info.name} of {dtype} {sample!r}: eager {eager}, converted {static}"
        assert eager[0] == static[0], what
        if eager[0] == "raises":  # (eager NumPy's TypeError, the program's OpTypeError)
            assert issubclass(static[1], eager[1]) or issubclass(eager[1], static[1]), what
            continue
        assert len(eager[1]) == len(static[1]), what
        for (e_type, e), (s_type, s) in zip(eager[1], static[1]):
            assert e_type == s_type, what
            np.testing.assert_array_equal(s, e, err_msg=what)


@pytest.mark.parametrize("dtype", EXACT)
def test_float_only_ops_refuse_exact_inputs_eagerly(dtype):
    """Paddle's kernels of these ops take floating-point tensors only; NumPy would compute
    something (relu of int64 gave int64, sigmoid of int64 zeros)."""
    import runtime.nn.functional as F

    x = rt.to_tensor(as_exact(np.array([1.5, -2.0, 0.5]), dtype))
    for fn in (F.relu, F.sigmoid, F.gelu, F.softmax, rt.linalg.inv):
        with pytest.raises(OpTypeError, match=dtype):
            fn(x.reshape([1, 3]) if fn is not rt.linalg.inv else x[:1].reshape([1, 1]))
    assert rt.sum(x).dtype.name == "int64"  # (accepted: Paddle sums integers as int64)


def test_an_op_called_with_fewer_inputs_than_on_its_first_call():
    """Ops with a varying number of inputs (shape tensors, index tensors): what a first call
    taught about input positions is not read past a later call's inputs."""
    from runtime.ops.registry import OPS

    op = OPS["add"]
    learned = op.refuses_exact
    op.refuses_exact = ((2, frozenset({np.dtype("int64").__class__})),)  # (a third input)
    try:
        got = rt.to_tensor([1, 2]) + rt.to_tensor([3, 4])
    finally:
        op.refuses_exact = learned
    np.testing.assert_array_equal(got.numpy(), [4, 6])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
