"""Compatibility: `d2s.convert_call` before the split into the call policy
(`d2s/call_policy.py`) and the operator generated code calls (`d2s/operators/calls.py`)."""
from __future__ import annotations

from .call_policy import (  # noqa: F401
    TENSOR_METHODS, _IGNORED_MODULES, _IGNORED_ROOTS, ignore_module, never_converted,
    not_to_static)
from .operators.calls import call  # noqa: F401
