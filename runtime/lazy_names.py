"""Names of a package that load on first access (PEP 562 module `__getattr__`).

A package lists `{public name: (module, attribute or None for the module itself)}` and binds

    __getattr__, __dir__ = lazy_names(__name__, _LAZY)

The first access imports the module (relative names resolve against the package) and binds
the value on the package, so later accesses are plain attribute lookups.
"""
import importlib
import sys


def lazy_names(package: str, table: dict):
    """The `__getattr__` and `__dir__` of package `package` for the lazy names in `table`."""

    def __getattr__(name: str):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, attribute = table[name]
        module = importlib.import_module(module_name, package)
        value = module if attribute is None else getattr(module, attribute)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
