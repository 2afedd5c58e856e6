"""Test configuration shared by every test package.

GPU tests (`-m gpu`) skip cleanly where CuPy or a CUDA device is missing. Every test gets a
wall-clock limit (D2S_TEST_TIMEOUT seconds, default 120; a test marked
`@pytest.mark.time_limit(N)` gets N where that is more): a converted loop that never ends must
fail its test, not hang the suite until CI's limit.
"""
import os
import signal

import numpy as np
import pytest

import runtime as rt


def pytest_collection_modifyitems(config, items):
    if rt.is_compiled_with_cuda():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _cpu_and_seeded():
    """Every test starts on the CPU with grad enabled and a fixed NumPy seed."""
    prev = rt.get_device()
    rt.set_device("cpu")
    np.random.seed(0)
    yield
    rt.set_device(prev)


@pytest.fixture(autouse=True)
def _time_limit(request):
    limit = int(os.environ.get("D2S_TEST_TIMEOUT", "120"))
    marker = request.node.get_closest_marker("time_limit")
    if marker is not None and limit > 0:
        limit = max(limit, int(marker.args[0]))
    if not hasattr(signal, "SIGALRM") or limit <= 0:
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"{request.node.nodeid} ran longer than {limit} s "
                           "(D2S_TEST_TIMEOUT); it probably loops forever")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
