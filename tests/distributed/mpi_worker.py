"""Run by test_mpi.py under `mpiexec -n 2`: data-parallel training and collectives, each
result written to OUT (npz / json) for the test process to check against one process.

Usage: mpiexec -n 2 python tests/distributed/mpi_worker.py OUT [--fake-gpu]
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dp_training as dpt

import d2s
import runtime as rt
from runtime import distributed as dist


def collectives(rank: int) -> dict:
    t = rt.to_tensor([1.0 + rank, 10.0 * rank])
    dist.all_reduce(t)
    m = rt.to_tensor([float(rank), -float(rank)])
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    avg = rt.to_tensor([2.0 * rank]).astype("float16")
    task = dist.all_reduce(avg, op=dist.ReduceOp.AVG, sync_op=False)
    task.wait()
    b = rt.to_tensor([[rank + 5, rank + 6]], dtype="int64")
    dist.broadcast(b, src=1)
    gathered = []
    dist.all_gather(gathered, rt.to_tensor([rank * 3.0, rank * 3.0 + 1]))
    dist.barrier()
    return {"sum": t.tolist(), "max": m.tolist(), "avg": avg.astype("float32").tolist(),
            "avg_dtype": avg.dtype.name, "broadcast": b.tolist(),
            "gather": [g.tolist() for g in gathered]}


def train(mode: str, rank: int, out: str, prefix: str = "") -> dict:
    rt.seed(100 + rank)  # different initial values per rank: DataParallel must broadcast
    net = dpt.Net()
    if mode == "static":
        net = d2s.to_static(net)
    model = dist.DataParallel(net, comm_buffer_size=0.002, last_comm_buffer_size=0.001)
    opt = dpt.make_optimizer("momentum" if mode == "eager" else "adam", model.parameters())
    dataset = dpt.make_dataset()
    sampler = rt.io.DistributedBatchSampler(dataset, batch_size=dpt.BATCH)
    losses = dpt.train(model, opt, rt.io.DataLoader(dataset, batch_sampler=sampler))
    on_device = all(isinstance(p._data, rt.backend.xp().ndarray) for p in net.parameters())
    np.savez(os.path.join(out, f"{prefix}{mode}_rank{rank}.npz"), **dpt.params_of(net))
    info = {"losses": losses, "buckets": len(model._reducer.buckets), "on_device": on_device}
    if mode == "static":
        info["programs"] = len(net.forward.program_cache)
    return info


class TwoHeads(rt.nn.Layer):
    """`second` is used only when the caller says so (rank 0 only, below)."""

    def __init__(self):
        super().__init__()
        self.first = rt.nn.Linear(4, 3)
        self.second = rt.nn.Linear(4, 3)

    def forward(self, x, use_second: bool):
        y = self.first(x)
        return y + self.second(x) if use_second else y


def accumulate_and_unused(rank: int, out: str) -> None:
    """Gradients after (a) two micro-batches, the first under no_sync(), and (b) a step where
    only rank 0 uses a layer (find_unused_parameters=True)."""
    rt.seed(7)
    net = dpt.Net()
    model = dist.DataParallel(net)
    x, y = accumulation_batches(rank)
    with model.no_sync():
        rt.nn.functional.cross_entropy(model(x[:4]), y[:4]).backward()
    rt.nn.functional.cross_entropy(model(x[4:]), y[4:]).backward()
    grads = {f"acc.{n}": p.grad.numpy() for n, p in net.named_parameters()}
    rt.seed(8)
    heads = TwoHeads()
    model = dist.DataParallel(heads, find_unused_parameters=True)
    model(unused_batch(rank), rank == 0).sum().backward()
    grads.update({f"unused.{n}": p.grad.numpy() for n, p in heads.named_parameters()})
    np.savez(os.path.join(out, f"grads_rank{rank}.npz"), **grads)


def accumulation_batches(rank: int):
    dataset = dpt.make_dataset()
    idx = range(rank * 8, rank * 8 + 8)
    x = np.stack([dataset[i][0].numpy() for i in idx])
    y = np.array([int(dataset[i][1]) for i in idx])
    return rt.to_tensor(x), rt.to_tensor(y)


def unused_batch(rank: int):
    return rt.to_tensor(np.arange(8.0, dtype="float32").reshape(2, 4) * (rank + 1))


def on_fake_gpu(rank: int, out: str) -> dict:
    """The NCCL engine on fake_cupy arrays (NCCL calls carried by MPI, see fake_nccl.py):
    the collectives and the eager training again, on 'GPU' tensors."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import fake_cupy
    import fake_nccl

    from runtime.distributed import env
    from runtime.distributed.nccl_engine import NCCLEngine

    mpi = env.engine()
    with fake_cupy.installed():
        fake_nccl.install(fake_cupy.FAKE)
        env.STATE.engine = NCCLEngine(mpi, rt.backend.xp(), timeout=60)
        try:
            result = {"collectives": collectives(rank), "device": rt.get_device()}
            result["eager"] = train("eager", rank, out, prefix="gpu_")
            result["calls"] = sorted({c[0] for c in fake_nccl.CALLS})
        finally:
            env.STATE.engine = mpi
    return result


def main() -> int:
    out = sys.argv[1]
    env = dist.init_parallel_env(timeout=60)
    rank = env.rank
    result = {"world": env.world_size, "backend": env.backend, "collectives": collectives(rank)}
    for mode in ("eager", "static"):
        result[mode] = train(mode, rank, out)
    accumulate_and_unused(rank, out)
    result["fake_gpu"] = on_fake_gpu(rank, out)
    try:  # rank 1 builds a wider layer: every rank must refuse at construction
        dist.DataParallel(rt.nn.Linear(4, 3 + rank))
    except dist.DistributedError as e:
        result["mismatch"] = str(e)
    with open(os.path.join(out, f"result_rank{rank}.json"), "w") as f:
        json.dump(result, f)
    # Last: rank 1 dies in user code; rank 0's next collective must time out naming it.
    dist.barrier()
    if rank == 1:
        raise RuntimeError("rank 1 fails on purpose (test_mpi: a dead rank)")
    from runtime.distributed.env import engine
    engine().timeout = 2.0
    try:
        dist.all_reduce(rt.ones([3]))
        message = "no error"
    except dist.DistributedTimeoutError as e:
        message = str(e)
    with open(os.path.join(out, "dead_rank0.txt"), "w") as f:
        f.write(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
