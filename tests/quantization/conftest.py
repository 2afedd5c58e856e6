"""One BLAS thread: LeNet's matrices are tiny (see tests/models/conftest.py)."""
import pytest


@pytest.fixture(scope="package", autouse=True)
def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
