"""Data-parallel step time at 1 and 2 processes (MPI engine, CPU), with scaling efficiency.

    python benchmarks/distributed.py [--steps 30] [--batch 128] [--procs 1,2] [--repeat 3]

LeNet on 8x8 images (the digits demo's model) trains with a fixed global batch (`--batch`,
split evenly over the processes: strong scaling) and again with a fixed per-process batch
(`--batch` each: weak scaling), eager and with a converted (`d2s.to_static`) forward. Each
configuration is its own `mpiexec -n P` launch (P = 1 runs through MPI too, so both sides
pay the same per-step costs). A step is forward + loss + backward (gradients averaged by
DataParallel) + SGD step; after 5 warm-up steps every rank times `--steps` steps in wall-clock
time (waiting for the other rank is part of a step), and the median of rank 0's steps counts;
each configuration is launched `--repeat` times and the fastest launch counts (a shared
machine's other load only ever slows a launch down). Each launch then times an all-reduce
of LeNet's gradient size (the communication in a step).

A control row runs P copies of the one-process training at once with no communication at
all: what this machine gives P processes (shared cores and caches, other jobs), against which
the data-parallel rows can be read.

Efficiency: strong scaling T1 / (P * TP) (1.0 = P times the throughput); weak scaling
T1 / TP (1.0 = P times the samples in the same time). CPU efficiency compares the CPU time a
step costs summed over all ranks with one process doing the same samples: it shows what data
parallelism adds (communication, waiting) apart from whether the machine had P idle cores.
BLAS runs one thread per process.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def worker(args) -> None:
    import numpy as np

    import d2s
    import runtime as rt
    from examples.models import LeNet
    from runtime import distributed as dist

    env = dist.init_parallel_env()
    rt.seed(0)
    net = LeNet(image_size=8)
    if args.mode == "static":
        net = d2s.to_static(net)
    model = dist.DataParallel(net)
    opt = rt.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    per_rank = args.batch // env.world_size if args.scaling == "strong" else args.batch
    rng = np.random.RandomState(env.rank)
    x = rt.to_tensor(rng.rand(per_rank, 1, 8, 8).astype("float32"))
    y = rt.to_tensor(rng.randint(0, 10, per_rank).astype("int64"))
    times, cpu = [], []
    for i in range(5 + args.steps):
        if i == 5:
            dist.barrier()
        start, start_cpu = time.perf_counter(), time.process_time()
        loss = rt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        if i >= 5:
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    cpu_all = rt.to_tensor([statistics.median(cpu)], dtype="float64")
    dist.all_reduce(cpu_all)  # CPU time of a step, summed over the ranks
    grad_size = sum(p.size for p in net.parameters())
    flat = rt.zeros([grad_size])
    comm = []
    for _ in range(50):
        start = time.perf_counter()
        dist.all_reduce(flat)
        comm.append(time.perf_counter() - start)
    if env.rank == 0:
        print(json.dumps({"ms": 1e3 * statistics.median(times), "per_rank": per_rank,
                          "cpu_ms": 1e3 * float(cpu_all),
                          "comm_ms": 1e3 * statistics.median(comm), "grad_size": grad_size}))


def launch(procs: int, mode: str, scaling: str, args) -> dict:
    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec")
    if mpiexec is None:
        raise SystemExit("mpiexec not found: pip install -e '.[dist]' (the mpich wheel)")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [mpiexec, "-n", str(procs), sys.executable, __file__, "--worker", "--mode", mode,
           "--scaling", scaling, "--steps", str(args.steps), "--batch", str(args.batch)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def launch_independent(procs: int, mode: str, args) -> dict:
    """The control: `procs` copies of the one-process run at once, no communication. What
    this machine gives P processes at all (shared cores, caches, other load)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env = {k: v for k, v in env.items() if k not in ("PMI_RANK", "PMI_SIZE", "PMI_FD")}
    cmd = [sys.executable, __file__, "--worker", "--mode", mode, "--scaling", "weak",
           "--steps", str(args.steps), "--batch", str(args.batch)]
    runs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
            for _ in range(procs)]
    results = [json.loads(r.communicate()[0].strip().splitlines()[-1]) for r in runs]
    return {"ms": max(r["ms"] for r in results), "per_rank": args.batch,
            "cpu_ms": sum(r["cpu_ms"] for r in results), "comm_ms": 0.0,
            "grad_size": results[0]["grad_size"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--procs", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="eager", help=argparse.SUPPRESS)
    parser.add_argument("--scaling", default="strong", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    procs = [int(p) for p in args.procs.split(",")]
    print(f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f}; LeNet 8x8, "
          f"{args.steps} timed steps, median ms per step, best of {args.repeat} launches\n")
    print("| forward | processes | batch per process | step ms | samples/s | efficiency | "
          "CPU ms per step, all ranks | CPU efficiency | all-reduce of the gradient ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode in ("eager", "static"):
        # (processes, scaling): one process is the base of both; launches of the configurations
        # alternate, so a burst of other load hits them alike
        configs = [(1, "strong")] + [(p, s) for p in procs if p > 1
                                     for s in ("strong", "weak", "independent")]
        best: dict = {}
        for _ in range(args.repeat):
            for config in configs:
                r = (launch_independent(config[0], mode, args) if config[1] == "independent"
                     else launch(config[0], mode, config[1], args))
                if config not in best or r["ms"] < best[config]["ms"]:
                    best[config] = r
        base, base_cpu = best[(1, "strong")]["ms"], best[(1, "strong")]["cpu_ms"]
        for (p, scaling), r in best.items():
            eff = base / (p * r["ms"]) if scaling == "strong" else base / r["ms"]
            work = 1 if scaling == "strong" else p  # samples per step relative to the base
            cpu_eff = base_cpu * work / r["cpu_ms"]
            what = "" if p == 1 else f" ({scaling})" if scaling != "independent" else \
                " independent, no communication"
            rate = 1e3 * r["per_rank"] * p / r["ms"]
            comm = f"{r['comm_ms']:.3f} ({r['grad_size']} floats)" if p > 1 and r["comm_ms"] \
                else "-"
            print(f"| {mode} | {p}{what} | {r['per_rank']} | {r['ms']:.2f} | {rate:.0f} | "
                  f"{eff:.2f} | {r['cpu_ms']:.2f} | {cpu_eff:.2f} | {comm} |", flush=True)


if __name__ == "__main__":
    main()
