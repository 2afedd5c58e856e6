"""Origin info: which user file, line and source text each AST node came from.

The parser stamps every node with an `OriginInfo`; converters copy it onto the nodes they
create (see `transformer.Base`), and the loader turns it into a line map from the generated
file back to the user's lines (`LineMap`), used by tracebacks, the program builder and pdb.
"""
from __future__ import annotations

import linecache
from typing import NamedTuple

from . import anno
from .walk import NODE_FIELDS, push_children, walk


class OriginInfo(NamedTuple):
    """A user source location: file, 1-based line, column, function name, the line's text."""

    filename: str
    lineno: int
    col_offset: int
    function_name: str
    source_line: str

    def short(self) -> str:
        import os
        return f"{os.path.basename(self.filename)}:{self.lineno}"

    def as_tuple(self) -> tuple:
        """(file, line, source): the form `runtime.program.origin` uses."""
        return (self.filename, self.lineno, self.source_line)


def stamp(tree, filename: str, line_offset: int, function_name: str,
          source_lines: list[str]) -> None:
    """Annotate every node of `tree` that has a position with its OriginInfo.

    `line_offset` is added to the parsed line numbers (the tree was parsed from a snippet);
    `source_lines` are the full file's lines, so the text shown is the user's own line.
    """
    origin_of = locator(filename, line_offset, function_name, source_lines)
    for node in walk(tree):
        lineno = getattr(node, "lineno", None)
        if lineno is not None:
            anno.setanno(node, anno.ORIGIN, origin_of(lineno, getattr(node, "col_offset", 0)))


def locator(filename: str, line_offset: int, function_name: str, source_lines: list[str]):
    """`origin_of(lineno, col_offset)`: the OriginInfo `stamp` gives a node at that position
    (for stamping nodes as they are made, without another walk). Each line's text is looked up
    once per locator."""
    texts: dict = {}
    count = len(source_lines)

    def origin_of(lineno: int, col_offset) -> OriginInfo:
        line = lineno + line_offset
        text = texts.get(line)
        if text is None:
            text = texts[line] = source_lines[line - 1].strip() if 0 < line <= count else ""
        # As OriginInfo(...) without the named tuple's Python-level __new__: one per node.
        return _tuple_new(OriginInfo, (filename, line, col_offset or 0, function_name, text))

    return origin_of


_tuple_new = tuple.__new__


def inherit(tree, origin: OriginInfo | None) -> None:
    """Give `origin` to every node in `tree` that has none (nodes made by a converter).

    A node that already has an origin is a user node (or was stamped when it was made), and
    so is everything below it: the walk stops there, which keeps converting linear."""
    if origin is None:
        return
    stack = [tree]
    pop, push = stack.pop, stack.append
    own, lazy = anno.ORIGIN_ATTR, anno.LAZY_ORIGIN
    while stack:
        node = pop()
        if getattr(node, own, None) is not None or getattr(node, lazy, None) is not None:
            continue  # (a parsed node's origin is made when read: `anno.origin_of`)
        setattr(node, own, origin)
        push_children(node, NODE_FIELDS[node.__class__], push)


class LineMap:
    """Generated-file line -> OriginInfo of the user statement it was generated from;
    `return_values`: the names the file's functions return their value in (`_retval`)."""

    def __init__(self, filename: str, mapping: dict[int, OriginInfo],
                 return_values: frozenset = frozenset()):
        self.filename = filename
        self.mapping = mapping
        self.return_values = return_values

    def get(self, lineno: int) -> OriginInfo | None:
        return self.mapping.get(lineno)

    def compact(self) -> None:
        """The map remade of new objects, once the converted tree is freed: its origins, their
        texts and line numbers were made among the tree's nodes, and kept Python's allocator
        from giving back the memory around them (6 MB of the 10,000-line function's peak)."""
        copies: dict = {}
        mapping = {}
        for line, src in self.mapping.items():
            new = copies.get(id(src))
            if new is None:
                filename, lineno, col, function_name, text = src
                new = copies[id(src)] = _tuple_new(OriginInfo, (
                    filename, _new_int(lineno), col, function_name, "".join((text, ""))))
            mapping[_new_int(line)] = new
        self.mapping = mapping


def _new_int(n: int) -> int:
    return n + 0  # (a new object for a number past 256; `int(n)` is `n` itself)


def user_source(filename: str) -> list[str]:
    """All lines of a user file (through linecache, so it also works for IPython cells; the
    cache is refreshed when the file changed on disk). The list is shared: do not change it."""
    linecache.checkcache(filename)
    raw = linecache.getlines(filename)
    entry = _SOURCES.get(filename)
    if entry is None or entry[0] is not raw:  # linecache re-read the file
        entry = _SOURCES[filename] = (raw, [line.rstrip("\n") for line in raw])
    return entry[1]


_SOURCES: dict = {}
