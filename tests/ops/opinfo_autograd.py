"""Ops that belong to autograd helpers rather than to math: tested where they are used."""
from __future__ import annotations

OPINFOS: list = []

EXEMPT = {
    "pylayer": "a user-defined PyLayer's forward and backward: tests/autograd_ext/test_pylayer.py",
    "pylayer_not_differentiable": "marks a PyLayer gradient that cannot be differentiated "
                                  "again: tests/autograd_ext/test_pylayer.py",
}
