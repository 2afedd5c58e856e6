"""Two processes under `mpiexec -n 2` (the `test` extra installs mpi4py and the mpich wheel,
so CI runs this): data-parallel training ends where one process training on the
concatenated batches ends, eager and converted; collectives give the reduced values; a
mismatched model is refused on every rank; a dead rank is named by the survivor's timeout.

The same run repeats the collectives and training on the NCCL engine over fake_cupy arrays
(fake_nccl.py). One launch (10-15 s on 2 busy cores) produces everything; each test checks
one part.
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import d2s
import runtime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_training as dpt
from mpi_worker import TwoHeads, accumulation_batches, unused_batch

pytestmark = pytest.mark.mpi
HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def mpiexec() -> str | None:
    beside = pathlib.Path(sys.executable).parent / "mpiexec"  # a venv's bin, not activated
    return str(beside) if beside.exists() else shutil.which("mpiexec")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if importlib.util.find_spec("mpi4py") is None or mpiexec() is None:
        pytest.skip("needs mpi4py and mpiexec: pip install -e '.[test]' installs both "
                    "(the mpich wheel provides mpiexec)")
    out = tmp_path_factory.mktemp("mpi")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([mpiexec(), "-n", "2", sys.executable, str(HERE / "mpi_worker.py"),
                           str(out)], capture_output=True, text=True, check=False, timeout=180,
                          env=env, cwd=ROOT)
    results = [json.loads((out / f"result_rank{r}.json").read_text()) for r in range(2)
               if (out / f"result_rank{r}.json").exists()]
    assert len(results) == 2, proc.stdout + proc.stderr
    return out, results, proc


def reference_training(mode: str) -> dict:
    """One process, the same initial parameters (rank 0's), batches of BATCH * WORLD."""
    rt.seed(100)
    net = dpt.Net()
    if mode == "static":
        net = d2s.to_static(net)
    opt = dpt.make_optimizer("momentum" if mode == "eager" else "adam", net.parameters())
    loader = rt.io.DataLoader(dpt.make_dataset(), batch_size=dpt.BATCH * dpt.WORLD)
    dpt.train(net, opt, loader)
    return dpt.params_of(net)


@pytest.mark.parametrize("mode", ["eager", "static"])
def test_two_processes_train_like_one_on_the_concatenated_batches(run, mode):
    out, results, _ = run
    ranks = [dict(np.load(out / f"{mode}_rank{r}.npz")) for r in range(2)]
    reference = reference_training(mode)
    assert sorted(ranks[0]) == sorted(reference)
    for name, want in reference.items():
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])  # one model everywhere
        np.testing.assert_allclose(ranks[0][name], want, rtol=2e-5, atol=2e-6, err_msg=name)
        assert not np.allclose(want, dict(dpt.params_of(_initial()))[name])  # it did train
    assert results[0][mode]["buckets"] == 3  # several buckets were reduced
    if mode == "static":  # alternate steps took both branches of one converted program
        assert results[0]["static"]["programs"] == results[1]["static"]["programs"] == 1


def _initial():
    rt.seed(100)
    return dpt.Net()


def test_no_sync_accumulation_and_unused_parameters(run):
    out, _, _ = run
    grads = [dict(np.load(out / f"grads_rank{r}.npz")) for r in range(2)]
    rt.seed(7)
    net = dpt.Net()
    loss = 0
    for r in range(2):
        x, y = accumulation_batches(r)
        F = rt.nn.functional
        loss = loss + F.cross_entropy(net(x[:4]), y[:4]) + F.cross_entropy(net(x[4:]), y[4:])
    (loss / 2).backward()
    rt.seed(8)
    heads = TwoHeads()
    ((heads(unused_batch(0), True).sum() + heads(unused_batch(1), False).sum()) / 2).backward()
    want = {f"acc.{n}": p.grad.numpy() for n, p in net.named_parameters()}
    want.update({f"unused.{n}": p.grad.numpy() for n, p in heads.named_parameters()})
    for name, w in want.items():
        for r in range(2):
            np.testing.assert_allclose(grads[r][name], w, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} rank {r}")


def test_collectives_values(run):
    _, results, _ = run
    for res in results:
        c = res["collectives"]
        assert res["world"] == 2 and res["backend"] == "mpi"
        assert c["sum"] == [3.0, 10.0]  # [1, 0] + [2, 10]
        assert c["max"][0] == 1.0 and c["max"][1] == 0.0
        assert c["avg"] == [1.0] and c["avg_dtype"] == "float16"  # (0 + 2) / 2, dtype kept
        assert c["broadcast"] == [[6, 7]]  # rank 1's values
        assert c["gather"] == [[0.0, 1.0], [3.0, 4.0]]


def test_mismatched_models_are_refused_on_every_rank(run):
    _, results, _ = run
    for res in results:
        assert res["mismatch"] == (
            "DataParallel: the ranks built different models: param weight has shape [4, 3] "
            "(float32) on rank 0 but [4, 4] (float32) on rank 1. Every rank must construct "
            "the same model (same configuration and sizes) before wrapping it.")


def test_a_dead_rank_is_named_by_the_timeout(run):
    out, _, proc = run
    message = (out / "dead_rank0.txt").read_text()
    assert message.startswith("rank 0: all_reduce (collective #")
    assert "waited 2 s for the other ranks. rank 1 did not answer within 2 s" in message
    assert "rank 1 fails on purpose" in proc.stderr  # the dead rank's own traceback


def test_nccl_engine_on_fake_gpu_trains_like_one_process(run):
    """The GPU path: NCCLEngine over fake_cupy arrays, its NCCL calls (pointers, counts, dtype
    codes) carried between the two processes by fake_nccl; the result must be the CPU one."""
    out, results, _ = run
    reference = reference_training("eager")
    for r, res in enumerate(results):
        gpu = res["fake_gpu"]
        assert gpu["device"] == f"gpu:{r}"  # one GPU per rank, by local rank
        assert gpu["collectives"] == res["collectives"]
        assert gpu["calls"] == ["allGather", "allReduce", "bcast"]
        assert gpu["eager"]["on_device"] and gpu["eager"]["buckets"] == 3
        params = dict(np.load(out / f"gpu_eager_rank{r}.npz"))
        for name, want in reference.items():
            np.testing.assert_allclose(params[name], want, rtol=2e-5, atol=2e-6, err_msg=name)
