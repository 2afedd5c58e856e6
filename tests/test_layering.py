"""The layering rules of DESIGN.md, checked by parsing every import statement.

runtime/ never imports d2s; d2s/pyct/ imports neither runtime nor the rest of d2s.
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def imported_modules(path: pathlib.Path, package: str) -> set:
    """Absolute names of the modules a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = package.split(".")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            found.add(mod)
    return found


def python_files(top: str):
    for path in sorted((ROOT / top).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        package = ".".join(parts if parts[-1] == "__init__" else parts[:-1])
        if parts[-1] == "__init__":
            package = ".".join(parts[:-1])
        yield path, package


def test_runtime_never_imports_d2s():
    files = list(python_files("runtime"))
    assert files, "no runtime sources found"
    for path, package in files:
        bad = {m for m in imported_modules(path, package) if m == "d2s" or m.startswith("d2s.")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_pyct_imports_neither_runtime_nor_d2s():
    if not (ROOT / "d2s" / "pyct").exists():
        pytest.skip("d2s/pyct not present")
    for path, package in python_files("d2s/pyct"):
        for m in imported_modules(path, package):
            top = m.split(".")
            assert top[0] != "runtime", f"{path.relative_to(ROOT)} imports {m}"
            if top[0] == "d2s":
                assert top[:2] == ["d2s", "pyct"], f"{path.relative_to(ROOT)} imports {m}"


def test_import_parser_resolves_relative_and_absolute_imports(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("from ..d2s import operators\nimport d2s.pyct\nfrom . import math\n")
    assert imported_modules(src, "runtime.ops") == {"runtime.d2s", "d2s.pyct", "runtime.ops"}
