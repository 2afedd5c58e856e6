"""Passes keep results and record themselves; JSON/.npz round trip keeps printing and results;
corrupted files give clear errors."""
import json

import numpy as np
import pytest

import runtime as rt
from runtime import static
from runtime.program import model_file, serialize

from .test_control_flow import _nested_cond_in_while


def _model():
    w = rt.Parameter(np.random.RandomState(0).randn(4, 3).astype("float32"), name="io.w")
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 4], "float32")
        c = rt.tanh(rt.to_tensor([1.0, 2.0, 3.0]))  # a constant subexpression
        h = rt.matmul(x, w) + c
        h2 = rt.matmul(x, w) + c  # a common subexpression
        _unused = rt.tanh(h) * 7.0
        out = static.nn.cond(rt.sum(h) > 0.0, lambda: h + h2, lambda: h * h2)
    return main, out


def test_passes_keep_results_and_record():
    main, out = _model()
    x = np.random.RandomState(1).randn(2, 4).astype("float32")
    ref, = static.Executor().run(main, {"x": x}, [out])
    p = static.passes.fold_constants(main)
    p = static.passes.eliminate_common_subexpressions(p)
    p = static.passes.eliminate_dead_code(p, keep=[out.name])
    assert p.passes == ["fold_constants", "eliminate_common_subexpressions",
                        "eliminate_dead_code"]
    assert main.passes == [] and p.num_ops() < main.num_ops()
    text = str(p)
    assert "tanh(%const" not in text and text.count("matmul(") == 1
    p.verify()
    got, = static.Executor().run(p, {"x": x}, [out.name])
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_dce_keeps_effects():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        static.Print(x)
        x * 2.0
    assert [op.type for op in static.passes.eliminate_dead_code(main).global_block().ops] \
        == ["print"]


def test_program_json_round_trip_with_control_flow():
    main, _, (loss, dx, dW) = _nested_cond_in_while()
    text = serialize.to_json(main)
    back = serialize.from_json(text, main.tensors)
    assert str(back) == str(main)
    feed = {"x": np.array([0.3, -0.2, 0.5]), "n": np.int64(3), "p": np.bool_(False)}
    a = static.Executor().run(main, feed, [loss, dx, dW])
    b = static.Executor().run(back, feed, [loss.name, dx.name, dW.name])
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert json.loads(text)["origins"][0][0].endswith("test_control_flow.py")


def test_inference_model_round_trip(tmp_path):
    main, out = _model()
    prefix = str(tmp_path / "m")
    static.save_inference_model(prefix, [main.global_block().var("x")], [out], program=main)
    prog, feeds, fetches = static.load_inference_model(prefix)
    assert feeds == ["x"] and fetches[0].name == out.name
    xv = np.ones((3, 4), "float32")
    ref, = static.Executor().run(main, {"x": xv}, [out])
    got, = static.Executor().run(prog, {"x": xv}, fetches)
    np.testing.assert_array_equal(got, ref)
    assert "_unused" not in str(prog) and prog.num_ops() < main.num_ops()
    with np.load(prefix + ".npz", allow_pickle=False) as f:
        assert "io.w" in f.files


def test_corrupted_files_raise_format_error(tmp_path):
    main, out = _model()
    prefix = str(tmp_path / "m")
    static.save_inference_model(prefix, [main.global_block().var("x")], [out], program=main)
    with open(prefix + ".json") as f:
        good = f.read()

    def edited(old, new):  # an edit made on purpose, with the checksum made to match
        d = json.loads(good.replace(old, new))
        d["checksum"] = model_file.content_checksum(d)
        return json.dumps(d)

    cases = {
        "{not json": "JSON is damaged",
        good.replace('"version": 1', '"version": 99'): "version 99",
        good.replace('"type": "matmul"', '"type": "evil_op"'): "does not match its checksum",
        edited('"type": "matmul"', '"type": "evil_op"'): "unknown op type 'evil_op'",
        edited('"blocks": [', '"blockz": ['): "corrupted program file",
    }
    for text, msg in cases.items():
        with open(prefix + ".json", "w") as f:
            f.write(text)
        with pytest.raises(serialize.FormatError, match=msg):
            static.load_inference_model(prefix)
    with open(prefix + ".json", "w") as f:
        f.write(good)
    with np.load(prefix + ".npz", allow_pickle=False) as f:
        arrays = {n: f[n] for n in f.files}
    arrays["io.w"] = np.zeros((2, 2), "float32")
    np.savez(prefix + ".npz", **arrays)
    with pytest.raises(serialize.FormatError, match="from another save"):
        static.load_inference_model(prefix)


def test_inference_model_with_loop_and_array_round_trip(tmp_path):
    from .test_control_flow import _array_program
    main, (length, _, stacked) = _array_program(True)
    prefix = str(tmp_path / "loop")
    g = main.global_block()
    static.save_inference_model(prefix, [g.var("x"), g.var("n")], [length, stacked],
                                program=main)
    prog, feeds, fetches = static.load_inference_model(prefix)
    assert feeds == ["x", "n"]
    feed = {"x": np.array([1.0, 2.0], "float32"), "n": np.int64(3)}
    a = static.Executor().run(main, feed, [length, stacked])
    b = static.Executor().run(prog, feed, fetches)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert "array_read" not in str(prog)  # pruned: `last` was not fetched
