"""Ops of the 'index' family (see runtime/ops/__init__.py)."""
from __future__ import annotations

METHODS: dict = {}

__all__: list = []
