"""Damaging saved models on purpose: the mutations the tests apply to `PATH.json` / `PATH.npz`,
the classification of what loading the damaged model then does, and (run as a script) a count
of the outcomes over many single-bit flips and truncations of each file.

    python -m tests.deploy.damage [--flips 300] [--seed 0]

Outcomes: `format_error` (the documented error at load), `same` (loads, identical output),
`other_load:<type>` (another exception while loading), `call:<type>` (loads, fails when called),
`different` (loads and returns another answer). Only the first two are acceptable.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import tempfile

import numpy as np

import d2s
import runtime as rt

try:  # the documented error (older trees: the serializer's FormatError)
    ACCEPTED = (d2s.ModelFormatError,)
except AttributeError:  # pragma: no cover - only when measuring an older tree
    from runtime.program.serialize import FormatError
    ACCEPTED = (FormatError,)


class Gate(rt.nn.Layer):
    """A small model with a tensor `if`, a tensor `while` and parameters of three dtypes."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)
        self.scale = self.create_parameter([3], default_initializer=rt.nn.initializer.Constant(
            0.5))
        self.register_buffer("steps", rt.to_tensor(np.array([3], "int64")))

    def forward(self, x):
        y = self.fc(x)
        if rt.mean(y) > 0:
            y = rt.tanh(y) * self.scale
        else:
            y = y - 1.0
        i = rt.zeros([1], "int64")
        while i < self.steps:
            y = y * 0.5 + 1.0
            i = i + 1
        return y


def save_gate(prefix: str):
    """Save a `Gate` at `prefix`; (inputs, expected output) of the saved model."""
    rt.seed(0)
    model = Gate()
    model.eval()
    d2s.save(model, prefix, input_spec=[d2s.InputSpec([None, 4], "float32")])
    x = np.linspace(-1, 1, 8, dtype="float32").reshape(2, 4)
    return (x,), _call(d2s.load(prefix), (x,))


def save_zoo(prefix: str, name: str):
    """Save a zoo model; (inputs, expected output)."""
    from examples.models import LeNet, SpeechClassifier
    rt.seed(0)
    rng = np.random.RandomState(0)
    if name == "lenet":
        model = LeNet(image_size=8)
        spec = [d2s.InputSpec([None, 1, 8, 8], "float32")]
        inputs = (rng.rand(2, 1, 8, 8).astype("float32"),)
    else:
        model = SpeechClassifier()
        spec = [d2s.InputSpec([None, 12, 8], "float32"), d2s.InputSpec([None], "int64")]
        inputs = (rng.rand(2, 12, 8).astype("float32"), np.array([12, 7], "int64"))
    model.eval()
    d2s.save(model, prefix, input_spec=spec)
    return inputs, _call(d2s.load(prefix), inputs)


def _call(model, inputs) -> list:
    out = model(*[rt.to_tensor(a) for a in inputs])
    return [np.asarray(t.numpy()) for t in (out if isinstance(out, list) else [out])]


def outcome(prefix: str, inputs, expected) -> str:
    """What loading (then calling) the possibly damaged model at `prefix` does."""
    try:
        model = d2s.load(prefix)
    except ACCEPTED:
        return "format_error"
    except Exception as e:  # noqa: BLE001  (that is what is being counted)
        return f"other_load:{type(e).__name__}"
    try:
        got = _call(model, inputs)
    except Exception as e:  # noqa: BLE001
        return f"call:{type(e).__name__}"
    same = len(got) == len(expected) and all(
        a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
        for a, b in zip(got, expected))
    return "same" if same else "different"


# ---- mutations (each takes the bytes of one file, returns the damaged bytes) -----------------

def flip_bit(data: bytes, bit: int) -> bytes:
    b = bytearray(data)
    b[bit // 8 % len(b)] ^= 1 << (bit % 8)
    return bytes(b)


def truncate(data: bytes, length: int) -> bytes:
    return data[:length]


def length_classes(n: int) -> list[int]:
    """Truncation lengths of every class: empty, 1 byte, inside the first header, powers of two,
    the middle, one short of the end, and a few from the end."""
    lengths = {0, 1, 2, 4, 8, 22, 30, 64, n // 2, n - 64, n - 22, n - 4, n - 1}
    lengths.update(2 ** k for k in range(n.bit_length()))
    return sorted(x for x in lengths if 0 <= x < n)


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def edit_json(text: bytes, edit) -> bytes:
    """`edit(dict)` applied to the parsed JSON file, re-serialized."""
    d = json.loads(text)
    edit(d)
    return json.dumps(d, indent=1).encode("utf-8")


# ---- the report -----------------------------------------------------------------------------

def _report(name: str, save, flips: int, rng: np.random.Generator) -> dict:
    folder = tempfile.mkdtemp(prefix="d2s-damage-")
    try:
        prefix = os.path.join(folder, name)
        inputs, expected = save(prefix)
        counts = {}
        for ext in (".json", ".npz"):
            path = prefix + ext
            good = read(path)
            c = collections.Counter()
            bits = rng.choice(len(good) * 8, size=min(flips, len(good) * 8), replace=False)
            for bit in bits:
                write(path, flip_bit(good, int(bit)))
                c["flip " + outcome(prefix, inputs, expected)] += 1
            for n in length_classes(len(good)):
                write(path, truncate(good, n))
                c["truncate " + outcome(prefix, inputs, expected)] += 1
            write(path, good)
            os.remove(path)
            c["missing " + outcome(prefix, inputs, expected)] += 1
            write(path, good)
            counts[ext] = c
        return counts
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flips", type=int, default=300, help="single-bit flips per file")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    models = {"gate": save_gate, "lenet": lambda p: save_zoo(p, "lenet"),
              "speech": lambda p: save_zoo(p, "speech")}
    bad_total = 0
    for name, save in models.items():
        for ext, c in _report(name, save, args.flips, rng).items():
            bad = sum(v for k, v in c.items() if not k.endswith((" format_error", " same")))
            bad_total += bad
            print(f"{name}{ext}: {sum(c.values())} damaged files, {bad} not a clean outcome")
            for k, v in sorted(c.items()):
                print(f"    {v:5d}  {k}")
    print(f"total not clean: {bad_total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
