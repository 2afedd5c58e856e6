"""The differential end-to-end corpus for `d2s.to_static` (issue 4).

Close to 300 small functions and Layers written the way model authors write eager code, grouped
by the Python construct they exercise (one `cases_*.py` module per category: if, while, for,
break/continue, return, logical operators, assert/print/len/casts, lists and dicts, calls,
miscellaneous syntax, Layers). Each case carries several argument sets that take different
paths through its tensor-dependent control flow; `test_corpus.py` checks that eager code and
one converted program agree on all of them (values, dtypes, shapes, printed labels, raised
exception types, and the state each call leaves in the Layer and the argument objects, each
run starting from its own copy of them: `state.py`), and that same-shaped inputs reuse one
program. About thirty cases also run
under `InputSpec([None, ...])` with batch sizes 1, 3 and 7 from a single program.

Run: `python -m pytest tests/d2s/corpus -q` (about 10 s of CPU).

How to add a case: write a function (or a Layer class constructible with no arguments) in the
module of its category, decorate it with `@case(args=[...])` (see `registry.py` for `batch=`,
`ref=`, `stdout=`, `raises=`), and run the command above. The eager test rejects argument
sets that all take the same path (it traces the bytecode run). A case that fails only when
converted is a transpiler or runtime bug: list it in `known_failures.py` with a one-line
diagnosis; it then runs as a strict xfail, so the fix shows up as an XPASS to remove.
Every test runs under the suite's time limit (tests/conftest.py, D2S_TEST_TIMEOUT), so a
converted loop that never ends fails its test instead of hanging the suite.
"""
