"""The differential end-to-end corpus for `d2s.to_static` (issue 4).

Over 150 small functions and Layers written the way model authors write eager code, grouped by
the Python construct they exercise (one `cases_*.py` module per category: if, while, for,
break/continue, return, logical operators, assert/print/len/casts, lists and dicts, calls,
miscellaneous syntax, Layers). Each case carries several argument sets that take different
paths through its tensor-dependent control flow; `test_corpus.py` checks that eager code and
one converted program agree on all of them, and that same-shaped inputs reuse one program.
Some cases also run under `InputSpec([None, ...])` with batch sizes 1, 3 and 7.

How to add a case: write a function in the module of its category, decorate it with
`@case(args=[...])` (see `registry.py`), and run
`python -m pytest tests/d2s/corpus -q`. The eager test rejects argument sets that all take the
same path. A case that fails only when converted is a transpiler or runtime bug: list it in
`known_failures.py` with a one-line diagnosis (it then runs as a strict xfail).
"""
