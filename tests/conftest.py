"""Test configuration shared by every test package.

GPU tests (`-m gpu`) skip cleanly where CuPy or a CUDA device is missing.
"""
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
