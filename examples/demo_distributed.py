"""The digits demo, data-parallel: LeNet on scikit-learn's 8x8 digits over MPI processes.

    mpiexec -n 2 python -m examples.demo_distributed          # two processes (CPU, MPI)
    python -m examples.demo_distributed                       # one process, no MPI needed
    mpiexec -n 2 python -m examples.demo_distributed --steps 3 --synthetic   # a smoke run

Every rank builds the same model (DataParallel copies rank 0's parameters to the others and
checks that the shapes match), reads its own part of each epoch through
`rt.io.DistributedBatchSampler`, and averages gradients after backward, so the ranks stay one
model. The forward is converted with `d2s.to_static`, the backward of the static program
gives the gradients that DataParallel averages. Rank 0 reports the test accuracy and checks
that every rank ends with the same parameters. Needs the `demo` extra (scikit-learn) and,
for more than one process, the `dist` extra (mpi4py and the mpich wheel, which provides
`mpiexec`). `--steps N` stops each epoch after N steps and `--synthetic` trains on random
digit-shaped images (no scikit-learn): a smoke run, which checks only that the ranks end as
one model, not the accuracy.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import d2s
import runtime as rt
from d2s.demo import accuracy, load_digits_split
from runtime import distributed as dist

from .models import LeNet

GLOBAL_BATCH = 64  # samples per step over all ranks


def main(epochs: int = 4, convert: bool = True, steps: int | None = None,
         synthetic: bool = False) -> int:
    """Train; returns 0 when every rank ends with rank 0's parameters and (a full run)
    learned."""
    try:  # LeNet's matrices are tiny: one BLAS thread per process (see demo.main)
        from threadpoolctl import threadpool_limits
    except ImportError:
        return run(epochs, convert, steps, synthetic)
    with threadpool_limits(limits=1, user_api="blas"):
        return run(epochs, convert, steps, synthetic)


def random_digits(n: int = 400, seed: int = 0):
    """load_digits_split's shapes and dtypes, random values: for a smoke run."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 1, 8, 8)).astype("float32")
    y = rng.integers(0, 10, size=n).astype("int64")
    return x[: n * 4 // 5], y[: n * 4 // 5], x[n * 4 // 5:], y[n * 4 // 5:]


def run(epochs: int, convert: bool, steps: int | None = None, synthetic: bool = False) -> int:
    env = dist.init_parallel_env()
    rank, world = env.rank, env.world_size
    x_train, y_train, x_test, y_test = random_digits() if synthetic else load_digits_split()
    train_set = rt.io.TensorDataset([rt.to_tensor(x_train), rt.to_tensor(y_train)])
    sampler = rt.io.DistributedBatchSampler(train_set, batch_size=GLOBAL_BATCH // world,
                                            shuffle=True, drop_last=True)
    loader = rt.io.DataLoader(train_set, batch_sampler=sampler)

    rt.seed(rank)  # deliberately different: DataParallel starts every rank from rank 0's
    net = LeNet(image_size=8)
    if convert:
        net = d2s.to_static(net)
    model = dist.DataParallel(net)
    opt = rt.optimizer.Adam(learning_rate=0.003, parameters=model.parameters())
    loss_fn = rt.nn.CrossEntropyLoss()
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"{world} process(es), engine '{env.backend}', {len(loader)} steps per epoch of "
        f"{GLOBAL_BATCH // world} images per process")
    for epoch in range(epochs):
        start, losses = time.perf_counter(), []
        model.train()
        for step, (xb, yb) in enumerate(loader):
            if steps is not None and step == steps:
                break
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
        say(f"  epoch {epoch + 1}/{epochs}: mean loss (rank 0's batches) "
            f"{np.mean(losses):.4f}, {time.perf_counter() - start:.2f} s")
    model.eval()
    with rt.no_grad():
        acc = accuracy(model(rt.to_tensor(x_test)).numpy(), y_test)
    # Same parameters everywhere: every rank compares its own with rank 0's.
    flat = rt.concat([p.flatten() for p in net.parameters()])
    reference = flat.clone()
    dist.broadcast(reference, src=0)
    gap = float(rt.abs(flat - reference).max())
    worst = rt.to_tensor([gap])
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    say(f"  test accuracy {acc:.2%}; largest parameter difference between ranks "
        f"{float(worst):.1e}")
    learned = acc > 0.8 or steps is not None or synthetic
    return 0 if float(worst) == 0.0 and learned else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=None, help="steps per epoch (all: none)")
    parser.add_argument("--synthetic", action="store_true",
                        help="random digit-shaped images instead of scikit-learn's digits")
    args = parser.parse_args()
    sys.exit(main(args.epochs, steps=args.steps, synthetic=args.synthetic))
