"""`d2s demo`: LeNet on scikit-learn's bundled 8x8 handwritten digits, eager then static.

1. trains in eager mode for a few epochs (with `runtime.progress`'s progress bar);
2. converts the model with `d2s.to_static` and shows part of the converted `forward`;
3. keeps training from the same parameters, one static program per step;
4. reports test accuracy and the measured eager vs static step time;
5. saves the inference model, reloads it in a fresh Python process and checks that its
   predictions match.

Run it with `d2s demo` (needs the `demo` extra: scikit-learn). `main(epochs=..., out_dir=...)`
is what the test calls.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import d2s
import runtime as rt
from runtime import nn
from runtime.progress import ProgressBar

from .lenet import LeNet

BATCH = 64

# The reloading process sees only the saved files: no model class, no Python source. It reads
# them back with the loader that matches the writer (`d2s.load` for `d2s.save`).
RELOAD_SCRIPT = """
import sys, numpy as np, runtime as rt
how, prefix, images, out = sys.argv[1:5]
x = np.load(images, allow_pickle=False)
if how == "d2s":
    import d2s
    logits = d2s.load(prefix)(rt.to_tensor(x))
    logits = (logits[0] if isinstance(logits, (list, tuple)) else logits).numpy()
else:
    program, feeds, fetches = rt.static.load_inference_model(prefix)
    logits, = rt.static.Executor().run(program, feed={feeds[0]: x}, fetch_list=fetches)
np.save(out, np.asarray(logits), allow_pickle=False)
"""


def load_digits_split(test_fraction: float = 0.2, seed: int = 0):
    """(x_train, y_train, x_test, y_test): images as float32 [N, 1, 8, 8] in [0, 1], int64
    labels."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("d2s demo needs scikit-learn: pip install scikit-learn (or, in the d2s "
                         "checkout, pip install '.[demo]')") from None
    digits = load_digits()
    x = (digits.images / 16.0).astype("float32")[:, None, :, :]
    y = digits.target.astype("int64")
    order = np.random.RandomState(seed).permutation(len(y))
    n_test = int(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def train_epoch(model, opt, loss_fn, x, y, rng, prefix: str) -> list[float]:
    """One pass over (x, y) in shuffled batches; returns the CPU seconds each step took (CPU
    time, so other load on a shared machine does not blur the comparison)."""
    model.train()
    order = rng.permutation(len(y))
    steps = (len(y) + BATCH - 1) // BATCH
    # redrawn in place on a terminal; elsewhere (logs, pipes) only each epoch's last step
    bar = ProgressBar(total=steps, prefix=f"  {prefix} step", every=steps)
    times = []
    for i in range(steps):
        idx = order[i * BATCH:(i + 1) * BATCH]
        if len(idx) < BATCH:  # a full batch keeps one static program (one input signature)
            idx = order[-BATCH:]
        xb, yb = rt.to_tensor(x[idx]), rt.to_tensor(y[idx])
        start = time.process_time()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        opt.clear_grad()
        times.append(time.process_time() - start)
        bar.update(i + 1, [("loss", float(loss))])
    return times


def predict(model, x) -> np.ndarray:
    model.eval()
    with rt.no_grad():
        return model(rt.to_tensor(x)).numpy()


def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float((logits.argmax(axis=1) == y).mean())


def excerpt(code: str, lines: int = 14) -> str:
    body = code.strip("\n").splitlines()
    more = len(body) - lines
    shown = body[:lines] + ([f"    ... ({more} more lines)"] if more > 0 else [])
    return "\n".join("    | " + line for line in shown)


def save_inference(model, prefix: str) -> str:
    """Write the eval-mode program (any batch size) and its parameters; returns which writer
    was used ('d2s' or 'static')."""
    spec = rt.static.InputSpec([None, 1, 8, 8], "float32", name="image")
    model.eval()
    if hasattr(d2s, "save") and hasattr(d2s, "load"):
        d2s.save(model, prefix, input_spec=[spec])
        return "d2s"
    concrete = model.forward.get_concrete_program(spec)
    rt.static.save_inference_model(prefix, concrete.inputs, concrete.outputs,
                                   program=concrete.main_program)
    return "static"


def reload_in_fresh_process(how: str, prefix: str, x: np.ndarray, work: str) -> np.ndarray:
    images, out = os.path.join(work, "images.npy"), os.path.join(work, "logits.npy")
    np.save(images, x, allow_pickle=False)
    subprocess.run([sys.executable, "-c", RELOAD_SCRIPT, how, prefix, images, out], check=True)
    return np.load(out, allow_pickle=False)


def main(eager_epochs: int = 3, static_epochs: int = 3, out_dir: str | None = None) -> int:
    """Run the demo; returns 0 when the reloaded model's predictions match, else 1."""
    # LeNet's matrices are tiny: BLAS worker threads cost more than they save, and on a busy
    # machine their spinning dominates (and blurs) the step times. threadpoolctl comes with
    # scikit-learn, which the demo needs anyway.
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return run(eager_epochs, static_epochs, out_dir)
    with threadpool_limits(limits=1, user_api="blas"):
        return run(eager_epochs, static_epochs, out_dir)


def run(eager_epochs: int, static_epochs: int, out_dir: str | None) -> int:
    rt.seed(0)
    rng = np.random.RandomState(0)
    x_train, y_train, x_test, y_test = load_digits_split()
    print(f"Digits (scikit-learn, 8x8): {len(y_train)} training and {len(y_test)} test images")

    model = LeNet(image_size=8)
    opt = rt.optimizer.Adam(learning_rate=0.003, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    n_params = sum(int(np.prod(p.shape)) for p in model.parameters())
    print(f"LeNet: {n_params} parameters\n\n1. Eager training")
    eager_times = []
    for epoch in range(eager_epochs):
        eager_times += train_epoch(model, opt, loss_fn, x_train, y_train, rng,
                                   f"eager  epoch {epoch + 1}/{eager_epochs}")
    eager_logits = predict(model, x_test)
    eager_acc = accuracy(eager_logits, y_test)
    print(f"  test accuracy after eager training: {eager_acc:.2%}")

    print("\n2. d2s.to_static(model): the converted forward (model.forward.code)")
    model = d2s.to_static(model)
    print(excerpt(model.forward.code))
    gap = float(np.abs(predict(model, x_test) - eager_logits).max())
    print(f"  same parameters, same test logits: max |static - eager| = {gap:.1e}")

    print("\n3. Static training from the same parameters (one program per step)")
    static_times = []
    for epoch in range(static_epochs):
        static_times += train_epoch(model, opt, loss_fn, x_train, y_train, rng,
                                    f"static epoch {epoch + 1}/{static_epochs}")
    logits = predict(model, x_test)
    static_acc = accuracy(logits, y_test)
    # The first static step traces and compiles; the median leaves that out of the comparison.
    eager_ms = 1e3 * statistics.median(eager_times)
    static_ms = 1e3 * statistics.median(static_times)
    print(f"  test accuracy: {static_acc:.2%} (after eager training: {eager_acc:.2%})")
    print(f"  training step (batch {BATCH}, median CPU time): eager {eager_ms:.2f} ms, static "
          f"{static_ms:.2f} ms ({eager_ms / static_ms:.2f}x); first static step, with "
          f"tracing: {1e3 * static_times[0]:.1f} ms")
    print(f"  programs traced: {len(model.forward.program_cache)}")

    print("\n4. Inference model: save, then reload in a fresh process")
    with tempfile.TemporaryDirectory() as tmp:
        work = out_dir or tmp
        prefix = os.path.join(work, "lenet_digits")
        how = save_inference(model, prefix)
        name = os.path.basename(prefix)
        files = sorted(f for f in os.listdir(work) if f.startswith(name))
        sizes = ", ".join(f"{f} ({os.path.getsize(os.path.join(work, f))} bytes)" for f in files)
        print(f"  saved with {'d2s.save' if how == 'd2s' else 'rt.static.save_inference_model'}"
              f" in {work}: {sizes}")
        reloaded = reload_in_fresh_process(how, prefix, x_test, work)
    diff = float(np.abs(reloaded - logits).max())
    same = bool((reloaded.argmax(1) == logits.argmax(1)).all()) and diff < 1e-4
    print(f"  reloaded predictions {'match' if same else 'DIFFER'}: max |logit difference| "
          f"{diff:.2e}, accuracy {accuracy(reloaded, y_test):.2%}")
    return 0 if same and gap < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
