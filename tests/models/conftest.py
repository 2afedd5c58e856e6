"""The zoo's matrices are small: one BLAS thread is faster than several, and on a busy 2-core
machine idle BLAS workers spinning cost several times the work itself (measured: this package
80 s wall / 13 s CPU with the default threads, 29 s / 7 s with one). Eager and static run in
the same process, so the comparisons are unaffected."""
import pytest


@pytest.fixture(scope="package", autouse=True)
def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # threadpoolctl comes with the demo extra (scikit-learn)
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
