"""Qualified names: a plain name (`x`) or a composite one, an attribute chain on a name
(`self.count`, `a.b.c`). Analyses report a write to `self.count = v` or `d[k] = v` as a write of
`self.count` / `d` (the object is state that changes).

A composite name is a `QName`: a `str` (so it sits in the same sets as plain names, and
prints and compares as its dotted text) that also knows its parts.

>>> q = QName.of("self", "count")
>>> q, q.root, q.attrs, is_composite(q), is_composite("x"), root_of("x")
('self.count', 'self', ('count',), True, False, 'x')
"""
from __future__ import annotations

import gast


class QName(str):
    """A composite name `root.attr1.attr2...`, as its dotted text."""

    __slots__ = ()

    @classmethod
    def of(cls, root: str, *attrs: str) -> QName:
        return cls(".".join((root,) + attrs))

    @property
    def root(self) -> str:
        """The variable the chain starts from (`self` for `self.a.b`)."""
        return self.partition(".")[0]

    @property
    def attrs(self) -> tuple:
        return tuple(self.split(".")[1:])

    @property
    def parent(self) -> str:
        """The object whose attribute this is (`self.a` for `self.a.b`)."""
        head = self.rpartition(".")[0]
        return QName(head) if "." in head else head


def is_composite(name: str) -> bool:
    """`self.x` (an attribute chain), not a plain variable name."""
    return "." in name


def root_of(name: str) -> str:
    """The variable a name starts from: itself for a plain name, `self` for `self.x.y`."""
    return name.partition(".")[0]


def qualified_name(node) -> str | None:
    """'a' for a name, QName 'a.b.c' for an attribute chain on a name; None otherwise."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = qualified_name(node.value)
        return None if base is None else QName(f"{base}.{node.attr}")
    return None
