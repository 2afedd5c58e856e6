"""Where a training step's time goes by thread: wall-clock time, process CPU time and each
thread's CPU time per call of one column of `model_table.py`'s cases, under the thread
settings of the environment (docs/performance.md, "Two threads").

    OPENBLAS_NUM_THREADS=2 D2S_NUM_THREADS=2 python benchmarks/thread_split.py \\
        --only LeNet --columns to_static,whole_step [--repeat 3]

On a shared machine run it under `chrt -f 10` (SCHED_FIFO) for the wall-clock time an idle
machine would give: its threads then take the cores from other processes. A thread's CPU
time comes from /proc (Linux): the calling thread first, then the others (OpenBLAS's
workers, d2s's helpers) in the order they were made; a thread that used a core while the
call waited shows as CPU time beyond the wall-clock time.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import model_table
import model_table_cases as spec

import runtime as rt

TICK = os.sysconf("SC_CLK_TCK")


def threads_cpu() -> dict:
    """{thread id: seconds of CPU time} of this process's threads (empty without /proc)."""
    out = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def measure(call, repeat: int, target: float) -> dict:
    """Best wall and process CPU ms per call over `repeat` rounds of about `target` s, and
    each thread's CPU ms per call over all rounds."""
    call(), call()
    start = time.perf_counter()
    call()
    number = max(3, int(target / max(time.perf_counter() - start, 1e-4)))
    before = threads_cpu()
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(number):
            call()
        wall = min(wall, (time.perf_counter() - w0) / number * 1e3)
        cpu = min(cpu, (time.process_time() - c0) / number * 1e3)
    after = threads_cpu()
    per_thread = [round((after[t] - before.get(t, 0.0)) / (number * repeat) * 1e3, 2)
                  for t in sorted(after)]
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "threads": per_thread}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="ResNet (2", help="case name prefixes, as model_table")
    parser.add_argument("--columns", default="to_static,whole_step")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=0.3, help="seconds per round")
    args = parser.parse_args(argv)
    settings = {k: os.environ.get(k, "-") for k in model_table.THREAD_VARS}
    print(f"# {settings}, load average {os.getloadavg()[0]:.1f}")
    makers = model_table.d2s_models(False)
    for case in model_table.selected(args.only):
        task, batch = spec.tasks(case, False)[0]
        arrays, labels = spec.make_arrays(case, batch, False)
        inputs = [rt.to_tensor(a) for a in arrays]
        labels = None if labels is None else rt.to_tensor(labels)
        rt.seed(0)
        calls = model_table.d2s_calls(case, makers[case["name"]](), task, inputs, labels)
        for column in args.columns.split(","):
            got = measure(calls[column], args.repeat, args.target)
            print(f"{case['name']} | {task} | {column} | wall {got['wall']} ms | process CPU "
                  f"{got['cpu']} ms | per thread {got['threads']} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
