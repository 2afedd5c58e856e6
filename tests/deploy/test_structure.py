"""A saved model keeps its inputs' names (InputSpec.name, then the argument's name) and the
nesting of its inputs and outputs (lists, tuples, dicts): `d2s.load` in a fresh process takes
the same list and dict and returns the same tuple, `d2s run` names each output's place, and a
damaged structure is refused like any other part of the file."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import model_file
from runtime.program.model_structure import build, check, encode

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Mixer(rt.nn.Layer):
    """forward(xs: list of two [N, 4] tensors, cfg: {"scale": [1], "bias": [2]}) ->
    (a [N, 2] tensor, {"sum": [N], "scale": [1]})"""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 2)

    def forward(self, xs, cfg):
        h = self.fc(xs[0] * cfg["scale"] + xs[1]) + cfg["bias"]
        return h, {"sum": rt.sum(h, axis=1), "scale": cfg["scale"] * 1.0}


SPECS = [[d2s.InputSpec([None, 4], "float32", "image"), d2s.InputSpec([None, 4])],
         {"scale": d2s.InputSpec([1], "float32"), "bias": d2s.InputSpec([2], "float32")}]


def reference(model, xs, cfg):
    w, b = model.fc.weight.numpy(), model.fc.bias.numpy()
    h = (xs[0] * cfg["scale"] + xs[1]) @ w + b + cfg["bias"]
    return h, {"sum": h.sum(1), "scale": cfg["scale"]}


def _inputs(n):
    rng = np.random.default_rng(n)
    xs = [rng.standard_normal((n, 4)).astype("float32") for _ in range(2)]
    return xs, {"scale": np.array([0.5], "float32"), "bias": np.array([1.0, -1.0], "float32")}


LOADER = textwrap.dedent("""
    import sys
    import numpy as np
    import runtime as rt, d2s
    model = d2s.load(sys.argv[1])
    print(model.feed_names)
    for n in (3, 1):
        rng = np.random.default_rng(n)
        xs = [rt.to_tensor(rng.standard_normal((n, 4)).astype("float32")) for _ in range(2)]
        cfg = {"scale": rt.to_tensor(np.array([0.5], "float32")),
               "bias": rt.to_tensor(np.array([1.0, -1.0], "float32"))}
        h, extra = model(xs, cfg)
        assert isinstance(extra, dict) and sorted(extra) == ["scale", "sum"], extra
        np.save(f"{sys.argv[1]}.h{n}.npy", h.numpy())
        np.save(f"{sys.argv[1]}.sum{n}.npy", extra["sum"].numpy())
""")


def test_nested_inputs_and_outputs_round_trip_in_a_fresh_process(tmp_path):
    rt.seed(0)
    model = Mixer().eval()
    prefix = str(tmp_path / "mixer")
    d2s.save(model, prefix, input_spec=SPECS)
    ran = subprocess.run([sys.executable, "-c", LOADER, prefix], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True,
                         text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[0] == "['image', 'xs_1', 'cfg_scale', 'cfg_bias']"
    for n in (3, 1):  # two batch sizes through one saved program
        xs, cfg = _inputs(n)
        want_h, want = reference(model, xs, cfg)
        np.testing.assert_allclose(np.load(f"{prefix}.h{n}.npy"), want_h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.load(f"{prefix}.sum{n}.npy"), want["sum"], rtol=1e-5,
                                   atol=1e-5)
        static = d2s.to_static(model)(  # eager vs converted vs the loaded model, in-process
            [rt.to_tensor(a) for a in xs], {k: rt.to_tensor(v) for k, v in cfg.items()})
        np.testing.assert_allclose(static[0].numpy(), want_h, rtol=1e-5, atol=1e-6)


def test_the_loaded_model_refuses_a_call_of_another_shape(tmp_path):
    rt.seed(0)
    d2s.save(Mixer().eval(), str(tmp_path / "m"), input_spec=SPECS)
    model = d2s.load(str(tmp_path / "m"))
    xs, cfg = _inputs(2)
    xs, cfg = [rt.to_tensor(a) for a in xs], {k: rt.to_tensor(v) for k, v in cfg.items()}
    with pytest.raises(TypeError, match=r"argument 0 should be a list of 2 items, got a list "
                                        r"of 1 items"):
        model(xs[:1], cfg)
    with pytest.raises(TypeError, match=r"argument 1 should be a dict with keys \['scale', "
                                        r"'bias'\], got a dict with keys \['scale'\]"):
        model(xs, {"scale": cfg["scale"]})
    with pytest.raises(TypeError, match="this model takes 2 arguments, got 1"):
        model(xs)


def test_inputs_are_named_by_input_spec_then_by_argument(tmp_path):
    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(4, 2)

        def forward(self, image, scale):
            return self.fc(image) * scale

    d2s.save(Net().eval(), str(tmp_path / "n"),
             input_spec=[d2s.InputSpec([None, 4], name="img"), d2s.InputSpec([1])])
    model = d2s.load(str(tmp_path / "n"))
    assert model.feed_names == ["img", "scale"] and model.structure is None
    np.save(tmp_path / "img.npy", np.ones((2, 4), "float32"))
    np.save(tmp_path / "scale.npy", np.array([2.0], "float32"))
    ran = subprocess.run([sys.executable, "-m", "d2s", "run", str(tmp_path / "n"), "--input",
                          f"img={tmp_path / 'img.npy'}", "--input",
                          f"scale={tmp_path / 'scale.npy'}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr
    assert "inputs img=float32[2,4], scale=float32[1]" in ran.stdout


def test_d2s_run_names_the_place_of_each_output(tmp_path, capsys):
    from d2s import cli
    rt.seed(0)
    d2s.save(Mixer().eval(), str(tmp_path / "m"), input_spec=SPECS)
    assert cli.main(["run", str(tmp_path / "m"), "--random", "-o", str(tmp_path / "y.npz")]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  output_")]
    assert len(lines) == 3
    assert lines[0].startswith("  output_0: float32[2,2]") and lines[0].endswith("(returned at "
                                                                                  "out[0])")
    assert lines[1].startswith("  output_1: float32[2]") and lines[1].endswith(
        "(returned at out[1]['sum'])")
    assert lines[2].startswith("  output_2: float32[1]") and lines[2].endswith(
        "(returned at out[1]['scale'])")


def test_a_damaged_structure_is_refused(tmp_path):
    rt.seed(0)
    prefix = str(tmp_path / "m")
    d2s.save(Mixer().eval(), prefix, input_spec=SPECS)
    with open(prefix + ".json", encoding="utf-8") as f:
        d = json.load(f)
    d["structure"]["inputs"][0]["list"][1] = {"input": 0}  # feed 0 twice, feed 1 never
    d["checksum"] = model_file.content_checksum(d)
    with open(prefix + ".json", "w", encoding="utf-8") as f:
        json.dump(d, f)
    with pytest.raises(d2s.ModelFormatError, match="input structure does not use each"):
        d2s.load(prefix)


def test_structure_encoding_round_trips_and_checks():
    out = ([1, 2], {"a": 3, 7: 4}, "text")
    node = encode(out, lambda leaf: {"output": leaf - 1} if isinstance(leaf, int) else
                  {"value": leaf})
    assert build(check(json.loads(json.dumps(node)), "output", 4), list("ABCD")) == (
        ["A", "B"], {"a": "C", 7: "D"}, "text")
    for bad in ({"output": 4}, {"set": []}, {"dict": [[1.5, {"output": 0}]]},
                {"list": [{"output": 0}]} | {"tuple": []}):
        with pytest.raises(d2s.ModelFormatError):
            check(bad, "output", 4)


def test_onnx_export_keeps_names_and_structure(tmp_path):
    onnx = pytest.importorskip("onnx")  # the optional extra
    ort = pytest.importorskip("onnxruntime")
    import d2s.onnx
    rt.seed(0)
    model = Mixer().eval()
    path = d2s.onnx.export(model, str(tmp_path / "mixer"), input_spec=SPECS)
    proto = onnx.load(path)
    structure = json.loads({p.key: p.value for p in proto.metadata_props}["d2s.structure"])
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["image", "xs_1", "cfg_scale", "cfg_bias"]
    assert len(sess.get_outputs()) == 3  # the returned tensors only, not the inputs again
    xs, cfg = _inputs(3)
    flat = sess.run(None, dict(zip([i.name for i in sess.get_inputs()], [*xs, *cfg.values()])))
    h, extra = build(check(structure["outputs"], "output", 3), flat)
    want_h, want = reference(model, xs, cfg)
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(extra["sum"], want["sum"], rtol=1e-5, atol=1e-5)


class Counter(rt.nn.Layer):
    """Returns Python numbers made from tensors beside a tensor: `len` of a list whose length
    a tensor `if` decides, `.item()` of the mean, `bool` of a comparison."""

    def forward(self, x):
        xs = [x, x * 2]
        if rt.mean(x) > 0:
            xs = [x, x * 2, x + 1]
        return {"n": len(xs), "mean": x.mean().item(), "big": bool(x.max() > 1)}, xs[0] * 3


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_python_numbers_come_back_as_python_numbers_from_a_loaded_model(tmp_path, sign):
    model = Counter().eval()
    static = d2s.to_static(model, input_spec=[d2s.InputSpec([None, 3], "float32")])
    x = np.array([[0.5, 1.5, 2.0]], "float32") * sign
    live = static(rt.to_tensor(x))
    eager = Counter()(rt.to_tensor(x))
    d2s.save(static, str(tmp_path / "counter"))
    loaded = d2s.load(str(tmp_path / "counter"))(rt.to_tensor(x))
    n = 3 if sign > 0 else 2
    want = {"n": n, "mean": float(np.float32(x.mean())), "big": bool(x.max() > 1)}
    for got in (eager, live, loaded):
        numbers, tensor = got
        assert numbers == want
        assert [type(v) for v in numbers.values()] == [int, float, bool]
        np.testing.assert_allclose(tensor.numpy(), x * 3)
