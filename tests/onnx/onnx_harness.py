"""Shared by the ONNX tests: export with `d2s.onnx`, run in onnxruntime, compare with the
executor (the converted program) and, where given, a NumPy reference."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the `onnx` extra is not installed "
                                          "(pip install '.[onnx]' in the checkout)")
ort = pytest.importorskip("onnxruntime", reason="the `onnx` extra (onnxruntime) is not "
                                                "installed (pip install '.[onnx]' in the checkout)")

import d2s  # noqa: E402
import d2s.onnx  # noqa: E402
import runtime as rt  # noqa: E402


def session(model_proto):
    return ort.InferenceSession(model_proto.SerializeToString(),
                                providers=["CPUExecutionProvider"])


def leaves(x) -> list:
    if isinstance(x, (list, tuple)):
        return [a for t in x for a in leaves(t)]
    return [np.asarray(x.numpy())]


def run_onnx(sess, inputs) -> list:
    feeds = {i.name: np.asarray(getattr(t, "numpy", lambda: t)())
             for i, t in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feeds)


def check_parity(fn, specs, *input_sets, atol=1e-5):
    """Export `fn` (a StaticFunction or Layer) once for `specs`, then for each tuple of
    inputs compare onnxruntime's outputs with the executor's (same dtypes and shapes).
    Returns (ModelProto, list of the executor's outputs per input set)."""
    proto = d2s.onnx.to_model(fn, specs)
    sess = session(proto)
    outs = []
    for inputs in input_sets:
        with rt.no_grad():
            want = leaves(fn(*inputs))
        got = run_onnx(sess, inputs)
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.shape == w.shape and g.dtype == w.dtype, \
                f"output {k}: onnx {g.dtype}{list(g.shape)} vs executor {w.dtype}{list(w.shape)}"
            np.testing.assert_allclose(g, w, rtol=0, atol=atol, err_msg=f"output {k}")
        outs.append(want)
    return proto, outs


def op_types(proto) -> set:
    """Every ONNX op type in the model, subgraphs included."""
    found = set()

    def walk(graph):
        for n in graph.node:
            found.add(n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(proto.graph)
    return found
