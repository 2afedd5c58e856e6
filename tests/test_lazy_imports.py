"""`import runtime, d2s` leaves out what costs more than NumPy itself to import and is needed
only by some programs: ml_dtypes (bfloat16) is imported on first use of bfloat16. Each check
runs in a fresh process."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, check=False, timeout=240,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_ml_dtypes_is_imported_on_first_use_of_bfloat16():
    out = _python("""
        import sys
        import runtime as rt, d2s
        print('ml_dtypes' in sys.modules)
        x = rt.to_tensor([1.5, 2.0], dtype='bfloat16')
        print('ml_dtypes' in sys.modules, x.dtype, (x * 2).numpy().astype('float32').tolist())
        print(rt.bfloat16 == x.numpy().dtype, rt.cast(x, 'float32').dtype)
    """)
    assert out.splitlines() == ["False", "True rt.bfloat16 [3.0, 4.0]", "True rt.float32"]


def test_a_bfloat16_array_made_by_the_user_is_known():
    out = _python("""
        import runtime as rt
        import numpy as np, ml_dtypes  # imported after runtime, by the user
        a = np.array([1.0, -2.0], dtype=ml_dtypes.bfloat16)
        t = rt.to_tensor(a)
        print(t.dtype, rt.abs(t).numpy().astype('float32').tolist())
    """)
    assert out.strip() == "rt.bfloat16 [1.0, 2.0]"


HEAVY = ("runtime.nn", "runtime.optimizer", "runtime.amp", "runtime.quantization",
         "runtime.distributed", "runtime.vision", "runtime.hapi.model", "runtime.serialization",
         "runtime.data", "runtime.io", "runtime.static.io", "runtime.metric", "d2s.converters",
         "ml_dtypes")
LAZY_NAMES = ["nn", "amp", "data", "io", "metric", "optimizer", "quantization", "regularizer",
              "vision", "load", "save", "distributed", "DataParallel", "device", "linalg", "hapi",
              "Model", "callbacks", "flops", "summary", "ParamAttr", "create_parameter"]


def test_import_runtime_and_d2s_leaves_the_heavy_parts_unloaded_until_used():
    out = _python(f"""
        import sys, types
        import runtime as rt, d2s
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
        names = {LAZY_NAMES!r}
        print(sorted(set(names) - set(dir(rt))))
        print(all(getattr(rt, n) is not None for n in names))
        print(isinstance(rt.nn, types.ModuleType), rt.Model.__name__, rt.summary.__name__,
              rt.flops.__name__, rt.hapi.summary is rt.summary, rt.DataParallel.__name__)
        from runtime import optimizer
        import runtime.vision
        print(optimizer is rt.optimizer, runtime.vision is rt.vision, rt.nn.Linear.__name__)
        try:
            rt.no_such_name
        except AttributeError as e:
            print(e)
    """)
    assert out.splitlines() == [
        "[]", "[]", "True", "True Model summary flops True DataParallel", "True True Linear",
        "module 'runtime' has no attribute 'no_such_name'"]


def test_every_op_of_a_lazily_loaded_module_is_in_the_registry_table():
    """An op registered outside `runtime.ops` must be in `REGISTERED_BY`, naming the module
    that registers it, or a saved program using it would not load in a fresh process."""
    out = _python(f"""
        import importlib
        import runtime as rt
        from runtime.ops import registry
        before = set(dict(registry.OPS))
        for name in {LAZY_NAMES!r}:
            getattr(rt, name)
        import runtime.quantization.int8, runtime.quantization.fake_quant
        print(sorted(set(dict(registry.OPS)) - before) == sorted(registry.REGISTERED_BY))
        for op, module in sorted(registry.REGISTERED_BY.items()):
            print(registry.OPS[op].kernel.__module__ == module, op)
    """)
    lines = out.splitlines()
    assert lines[0] == "True"
    from runtime.ops import registry
    assert len(lines) == 1 + len(registry.REGISTERED_BY) >= 7, out
    assert all(line.startswith("True ") for line in lines[1:]), out


def test_a_saved_program_with_quantization_ops_runs_in_a_process_that_never_imported_them(
        tmp_path):
    import numpy as np

    import d2s
    import runtime as rt

    Q = rt.quantization
    rt.seed(3)
    net = rt.nn.Sequential(rt.nn.Linear(4, 6), rt.nn.ReLU(), rt.nn.Linear(6, 2))
    x = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")
    ptq = Q.PTQ(Q.QuantConfig())
    observed = ptq.quantize(net)
    observed(rt.to_tensor(x))
    int8 = ptq.convert(observed)
    qat = Q.QAT(Q.QuantConfig()).quantize(
        rt.nn.Sequential(rt.nn.Linear(4, 6), rt.nn.ReLU(), rt.nn.Linear(6, 2)))
    qat.eval()
    spec = [d2s.InputSpec([None, 4], "float32")]
    expected = {}
    for name, model in (("int8", int8), ("qat", qat)):
        d2s.save(model, str(tmp_path / name), input_spec=spec)
        expected[name] = model(rt.to_tensor(x)).numpy()
    np.save(tmp_path / "x.npy", x)
    out = _python(f"""
        import sys
        import numpy as np
        import runtime as rt, d2s
        x = rt.to_tensor(np.load({str(tmp_path / "x.npy")!r}))
        print('runtime.quantization' in sys.modules)
        for name in ("int8", "qat"):
            loaded = d2s.load({str(tmp_path)!r} + "/" + name)
            np.save({str(tmp_path)!r} + "/" + name + "_out.npy", loaded(x).numpy())
        print('runtime.quantization' in sys.modules)
    """)
    assert out.splitlines() == ["False", "True"]
    for name in ("int8", "qat"):
        got = np.load(tmp_path / f"{name}_out.npy")
        np.testing.assert_allclose(got, expected[name], rtol=1e-6, atol=1e-6)


def test_the_import_time_benchmark_reports_both_imports_and_their_ratio(capsys):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "benchmarks", "import_time.py")
    spec = importlib.util.spec_from_file_location("import_time", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("import numpy ") and "import numpy, runtime, d2s" in out
    assert float(out.rsplit("ratio ", 1)[1].rstrip("x\n")) > 1.0  # (numpy is part of both)
