"""The errors `rt.distributed` raises: each names the ranks involved and what to do."""
from __future__ import annotations


class DistributedError(RuntimeError):
    """A collective or DataParallel cannot go on (mismatched models, wrong device, ...)."""


class DistributedTimeoutError(TimeoutError):
    """A collective waited longer than the timeout for its peers. The message names the ranks
    that did not answer (exited, crashed, or busy outside `rt.distributed`) and those that
    are waiting in a different collective."""
