"""Every zoo model (examples/models), left in training mode or in eval mode, saved with
`d2s.save` and loaded in a fresh process: the loaded model gives the live model's eval-mode
answer (saving traces the inference program; `d2s.save` checks it as loading does before it
writes, so no saved file is refused)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
from examples import models as zoo
from runtime.static import InputSpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _f32(seed, *shape):
    return np.random.RandomState(seed).randn(*shape).astype("float32")


def _ids(seed, high, *shape):
    return np.random.RandomState(seed).randint(1, high, shape).astype("int64")


def _utterances(seed, n, t=20, f=8):
    rng = np.random.RandomState(seed)
    lengths = rng.randint(4, t + 1, n)
    x = rng.randn(n, t, f).astype("float32")
    x[np.arange(t)[None, :] >= lengths[:, None]] = 0.0
    return x, lengths.astype("int64")


# name -> (the model, the method saved, its input specs, inputs)
CASES = {
    "lenet": (lambda: zoo.LeNet(image_size=8), "forward", [InputSpec([None, 1, 8, 8])],
              (_f32(0, 3, 1, 8, 8),)),
    "resnet": (lambda: zoo.ResNet(widths=(8, 16), blocks_per_stage=1), "forward",
               [InputSpec([None, 3, 16, 16])], (_f32(1, 2, 3, 16, 16),)),
    "mobilenet": (lambda: zoo.MobileNet(width=0.5), "forward", [InputSpec([None, 3, 16, 16])],
                  (_f32(2, 2, 3, 16, 16),)),
    "lstm_lm": (lambda: zoo.LSTMLanguageModel(40, 16, 16), "forward",
                [InputSpec([None, 6], "int64")], (_ids(3, 40, 3, 6),)),
    "bert": (lambda: zoo.BertClassifier(60, pooling="mean"), "forward",
             [InputSpec([None, 8], "int64")], (_ids(4, 60, 2, 8),)),
    "deepfm": (lambda: zoo.DeepFM((10, 8, 6, 4), num_dense=3), "forward",
               [InputSpec([None, 4], "int64"), InputSpec([None, 3])],
               (np.stack([np.random.RandomState(5).randint(0, s, 4) for s in (10, 8, 6, 4)],
                         1), _f32(5, 4, 3))),
    "speech": (lambda: zoo.SpeechClassifier(8), "forward",
               [InputSpec([None, 20, 8]), InputSpec([None], "int64")], _utterances(6, 3)),
    "seq2seq": (lambda: zoo.Seq2Seq(vocab_size=12), "greedy_search",
                [InputSpec([None, 5], "int64"), InputSpec([None], "int64")],
                (_ids(7, 12, 3, 5), np.array([5, 2, 4], "int64"))),
}

LOADER = textwrap.dedent("""
    import sys
    import numpy as np
    import runtime as rt, d2s
    folder = sys.argv[1]

    def flat(out):  # the leaves of a nested output (the saved model keeps the nesting)
        if isinstance(out, (list, tuple)):
            return [a for t in out for a in flat(t)]
        return [out.numpy()]

    with np.load(folder + "/expected.npz", allow_pickle=False) as z:
        expected = dict(z)
    for name in sys.argv[2:]:
        inputs = [rt.to_tensor(expected[f"{name}.in{i}"]) for i in range(9)
                  if f"{name}.in{i}" in expected]
        want = [expected[f"{name}.out{i}"] for i in range(9) if f"{name}.out{i}" in expected]
        for mode in ("train", "eval"):
            got = flat(d2s.load(f"{folder}/{name}.{mode}")(*inputs))
            assert len(got) == len(want), (name, mode, len(got), len(want))
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name + mode)
            print("ok", name, mode, flush=True)
""")


def _outputs(out) -> list:
    if isinstance(out, (list, tuple)):
        return [a for t in out for a in _outputs(t)]
    return [out.numpy()]


def _save_both_modes(names, folder) -> None:
    expected = {}
    for name in names:
        make, method, specs, inputs = CASES[name]
        rt.seed(0)
        model = make()
        fn = d2s.to_static(getattr(model, method))
        with rt.no_grad():  # a training-mode call: BatchNorm statistics move
            fn(*[rt.to_tensor(a) for a in inputs])
        with pytest.warns(UserWarning, match="is in training mode"):
            d2s.save(fn, f"{folder}/{name}.train", input_spec=specs)
        assert model.training
        model.eval()
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            d2s.save(fn, f"{folder}/{name}.eval", input_spec=specs)
        with rt.no_grad():
            want = _outputs(getattr(model, method)(*[rt.to_tensor(a) for a in inputs]))
        expected.update({f"{name}.in{i}": a for i, a in enumerate(inputs)})
        expected.update({f"{name}.out{i}": a for i, a in enumerate(want)})
    np.savez(f"{folder}/expected.npz", **expected)
    ran = subprocess.run([sys.executable, "-c", LOADER, folder, *names], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True,
                         text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count("ok ") == 2 * len(names)


def test_lenet_and_resnet_saved_in_either_mode_load_in_a_fresh_process(tmp_path):
    _save_both_modes(["lenet", "resnet"], str(tmp_path))


@pytest.mark.slow
def test_every_zoo_model_saved_in_either_mode_loads_in_a_fresh_process(tmp_path):
    _save_both_modes(list(CASES), str(tmp_path))
