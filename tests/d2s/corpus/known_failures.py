"""Corpus cases that fail when converted, with a one-line diagnosis each: the transpiler's bug
list. They run as strict xfails, so fixing one makes its test fail until it is removed here.

STATIC: failures of `test_static` (one conversion, every argument set).
DYNAMIC: failures of `test_dynamic_batch` (`InputSpec([None, ...])`, batch sizes 1, 3, 7).
"""
from __future__ import annotations

STATIC: dict[str, str] = {
    "wild4_speech.label_decode_to_strings": (
        "PaddleOCR's label decode picks characters of a Python string by ids read from an "
        "input's .numpy(): a program computes numbers, not text; refused at the user's "
        "chars.append(_CHARS[i]) (docs/d2s.md 'A computed value choosing a Python object')"),
}

DYNAMIC: dict[str, str] = {}
