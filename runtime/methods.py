"""Install operators and methods on `Tensor` and the static `Variable` from one table.

Each op module exports `METHODS` (name -> function taking the tensor first). Installing them on
both classes from the same table is what keeps eager and static code interchangeable.
"""
from __future__ import annotations

from .ops import MODULES


def method_table() -> dict:
    table = {}
    for module in MODULES:
        for name, fn in module.METHODS.items():
            if name in table and table[name] is not fn:
                raise RuntimeError(f"method {name!r} is defined by two op modules")
            table[name] = fn
    return table


def install(cls) -> None:
    for name, fn in method_table().items():
        setattr(cls, name, fn)
