"""rt.distributed in one process: a world of one without MPI, the gradient reducer's rules on
a loopback engine (two identical ranks), the errors, and DistributedBatchSampler."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import distributed as dist
from runtime.distributed import env as dist_env

F = rt.nn.functional
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_plain_python_is_a_world_of_one_without_importing_mpi():
    code = ("import sys, runtime as rt\n"
            "e = rt.distributed.init_parallel_env()\n"
            "m = rt.distributed.DataParallel(rt.nn.Linear(2, 2))\n"
            "t = rt.ones([2]); rt.distributed.all_reduce(t); rt.distributed.barrier()\n"
            "print(e.world_size, e.rank, e.backend, t.tolist(), 'mpi4py' in sys.modules)")
    environ = {k: v for k, v in os.environ.items() if k not in dist_env.LAUNCHER_VARIABLES}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False, env=dict(environ, PYTHONPATH=ROOT), cwd=ROOT, timeout=60)
    assert out.stdout.split() == ["1", "0", "single", "[1.0,", "1.0]", "False"], out.stderr


class Loopback:
    """Two ranks holding identical data: a sum over ranks is twice the local value."""

    name, rank, size = "loopback", 0, 2

    def __init__(self):
        self.reduced = []

    def start_all_reduce(self, array, op="sum"):
        self.reduced.append(array.size)
        array *= 2
        return _Done(array)

    def all_gather(self, array):
        return np.stack([array, array])

    def broadcast(self, array, root=0):
        return array

    def barrier(self):
        pass


class _Done:
    def __init__(self, array):
        self.array = array

    def wait(self):
        return self.array


@pytest.fixture
def loopback(monkeypatch):
    eng = Loopback()
    monkeypatch.setattr(dist_env.STATE, "engine", eng)
    return eng


class MLP(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = rt.nn.Linear(4, 8)
        self.fc2 = rt.nn.Linear(8, 3)
        self.extra = rt.nn.Linear(4, 3)

    def forward(self, x, use_extra=True):
        y = self.fc2(F.relu(self.fc1(x)))
        return y + self.extra(x) if use_extra else y


def grads(layer):
    return {n: p.grad.numpy() for n, p in layer.named_parameters()}


@pytest.mark.parametrize("convert", [False, True])
def test_reducer_averages_in_buckets_and_keeps_accumulated_grads(loopback, convert):
    rt.seed(0)
    ref = MLP()
    rt.seed(0)
    net = MLP()
    if convert:
        net = d2s.to_static(net)
    model = dist.DataParallel(net, comm_buffer_size=1e-6, last_comm_buffer_size=1e-6)
    assert len(model._reducer.buckets) == 6  # one per parameter at this size
    x1, x2 = rt.randn([5, 4]), rt.randn([5, 4])
    for x in (x1, x2):  # two backward passes without clear_grad: gradients add up
        model(x).sum().backward()
        ref(x).sum().backward()
    for name, want in grads(ref).items():
        np.testing.assert_allclose(grads(net)[name], want, rtol=1e-6, err_msg=name)
    # launch order: last parameters first (extra, fc2, fc1), every bucket once per backward
    assert loopback.reduced == [3, 12, 3, 24, 8, 32] * 2


def test_wrapping_again_replaces_the_hooks(loopback):
    net = MLP()
    dist.DataParallel(net)
    dist.DataParallel(net)  # e.g. rebuilt each epoch: one reduction per backward, not two
    net(rt.ones([2, 4])).sum().backward()
    assert len(loopback.reduced) == 1


def test_no_sync_defers_the_reduction(loopback):
    rt.seed(0)
    net = MLP()
    model = dist.DataParallel(net)
    with model.no_sync():
        model(rt.ones([2, 4])).sum().backward()
    assert loopback.reduced == []
    model(rt.ones([2, 4])).sum().backward()
    assert len(loopback.reduced) == 1  # one 25 MB bucket
    rt.seed(0)
    ref = MLP()
    (ref(rt.ones([2, 4])).sum() * 2).backward()
    for name, want in grads(ref).items():
        np.testing.assert_allclose(grads(net)[name], want, rtol=1e-6)


def test_a_parameter_without_gradient_is_named_at_the_next_forward(loopback):
    model = dist.DataParallel(MLP())
    model(rt.ones([2, 4]), use_extra=False).sum().backward()
    with pytest.raises(dist.DistributedError) as e:
        model(rt.ones([2, 4]))
    assert str(e.value) == (
        "DataParallel (rank 0): the last backward gave no gradient to extra.weight, "
        "extra.bias, so that step's gradients were not averaged (the other ranks are left "
        "waiting for them). If some parameters are unused in some steps (branches, frozen "
        "parts), pass DataParallel(..., find_unused_parameters=True).")


@pytest.mark.parametrize("convert", [False, True])
def test_find_unused_parameters_lets_the_step_finish(loopback, convert):
    rt.seed(0)
    net = d2s.to_static(MLP()) if convert else MLP()
    model = dist.DataParallel(net, find_unused_parameters=True)
    model(rt.ones([2, 4]), use_extra=False).sum().backward()
    # this rank contributed zero for `extra`; the loopback's twin did too
    assert np.all(net.extra.weight.grad.numpy() == 0)
    model(rt.ones([2, 4])).sum().backward()  # the next step runs normally
    assert np.abs(net.extra.weight.grad.numpy()).sum() > 0
    model(rt.ones([2, 4]), use_extra=False)  # a forward with no backward (evaluation)
    net.clear_gradients()
    model(rt.ones([2, 4])).sum().backward()
    assert net.extra.weight.grad is not None


def test_rt_grad_of_data_parallel_parameters_is_refused(loopback):
    net = MLP()
    model = dist.DataParallel(net)
    loss = model(rt.ones([2, 4])).sum()
    with pytest.raises(dist.DistributedError, match="rt.grad"):
        rt.grad(loss, net.parameters())


def test_collectives_and_data_parallel_refuse_to_be_traced(loopback):
    model = dist.DataParallel(MLP())

    @d2s.to_static
    def step(x):
        return model(x)

    with pytest.raises(dist.DistributedError, match=r"DataParallel\(d2s.to_static\(model\)\)"):
        step(rt.ones([2, 4]))

    @d2s.to_static
    def reduce(x):
        dist.all_reduce(x)
        return x

    with pytest.raises(dist.DistributedError, match="runs eagerly"):
        reduce(rt.ones([2]))


def test_model_mismatch_message_names_the_parameter(monkeypatch):
    class Differs(Loopback):
        def all_gather(self, array):  # rank 1 sees a model with a wider fc2
            other = array
            if array.dtype == np.uint8:
                text = array.tobytes().rstrip(b"\0").replace(b'fc2.weight", [8, 3]',
                                                              b'fc2.weight", [8, 4]')
                other = np.zeros_like(array)
                other[:len(text)] = np.frombuffer(text, np.uint8)
            return np.stack([array, other])

    monkeypatch.setattr(dist_env.STATE, "engine", Differs())
    with pytest.raises(dist.DistributedError,
                       match=r"fc2.weight has shape \[8, 3\] \(float32\) on rank 0 but \[8, 4\]"):
        dist.DataParallel(MLP())


# ---- DistributedBatchSampler -----------------------------------------------------------------
@pytest.mark.parametrize("n, batch, ranks", [(10, 2, 2), (7, 2, 3), (12, 3, 2), (5, 4, 2)])
def test_sampler_ranks_partition_the_epoch_like_one_big_batch(n, batch, ranks):
    shares = [list(rt.io.DistributedBatchSampler(list(range(n)), batch, ranks, r))
              for r in range(ranks)]
    lengths = {len(s) for s in shares}
    assert len(lengths) == 1 and lengths == {len(rt.io.DistributedBatchSampler(
        list(range(n)), batch, ranks, 0))}
    padded = np.resize(np.arange(n), -(-n // ranks) * ranks).tolist()
    together = [i for step in zip(*shares, strict=True) for b in step for i in b]
    assert together == padded  # step k of every rank, concatenated, in order


def test_sampler_shuffles_the_same_on_every_rank_and_by_epoch():
    a = rt.io.DistributedBatchSampler(list(range(20)), 5, 2, 0, shuffle=True)
    b = rt.io.DistributedBatchSampler(list(range(20)), 5, 2, 1, shuffle=True)
    first = sorted(i for batch in list(a) + list(b) for i in batch)
    assert first == list(range(20))
    second_a = list(a)  # the epoch advanced: another order
    a.set_epoch(0)
    again = list(a)
    assert second_a != again and again == list(rt.io.DistributedBatchSampler(
        list(range(20)), 5, 2, 0, shuffle=True))


def test_sampler_drop_last_and_arguments():
    s = rt.io.DistributedBatchSampler(list(range(11)), 4, 2, 1, drop_last=True)
    assert list(s) == [[4, 5, 6, 7]] and len(s) == 1
    loader = rt.io.DataLoader(rt.io.TensorDataset([rt.arange(8).astype("float32")]),
                              batch_sampler=rt.io.DistributedBatchSampler(
                                  list(range(8)), 2, 2, 0))
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [4.0, 5.0]]
    with pytest.raises(ValueError, match="rank must be in"):
        rt.io.DistributedBatchSampler([1, 2], 1, 2, 2)
    assert rt.io.DistributedBatchSampler([1, 2, 3], 2).nranks == 1  # world of one


def test_docs_python_blocks_run():
    """docs/distributed.md's Python blocks run as written (in a world of one)."""
    import re
    with open(os.path.join(ROOT, "docs", "distributed.md")) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 2
    for block in blocks:  # the repository's own documentation, run as its reader would
        exec(compile(block, "docs/distributed.md", "exec"), {})  # noqa: S102


def test_float16_gradients_travel_as_float32_on_mpi(loopback, monkeypatch):
    monkeypatch.setattr(loopback, "name", "mpi")  # MPI has no 16-bit float type
    rt.seed(0)
    ref = rt.nn.Linear(4, 3).to(dtype="float16")
    rt.seed(0)
    net = rt.nn.Linear(4, 3).to(dtype="float16")
    model = dist.DataParallel(net)
    assert [b.flat.dtype.name for b in model._reducer.buckets] == ["float32"]
    x = rt.ones([2, 4]).astype("float16")
    model(x).sum().backward()
    ref(x).sum().backward()
    for name, want in grads(ref).items():
        got = grads(net)[name]
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)
