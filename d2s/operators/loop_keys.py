"""A graph loop's dict state keeps its keys: a body that removes or adds one (`del d[k]`,
`d.pop(k)`, a new key; nested, or through other names) is a `StateChangeError` naming the key,
the dict and the loop (`loops.graph_while` checks each trace of the body)."""
from __future__ import annotations

from . import mutation
from .variables import where


def refuse_key_change(path, key, src, how="removes"):
    if how == "adds":
        raise mutation.StateChangeError(
            f"the body of a loop whose condition is a tensor ({where(src)}) adds the key "
            f"{key!r} to the dict {path}; in eager code the key exists after the loop only when "
            "the loop ran at least once, which the tensor condition decides when the program "
            "runs, and one static program has one set of keys. Set it before the loop to a "
            f"value of the same type and shape ({path}[{key!r}] = ..., or {path}.setdefault("
            f"{key!r}, ...)); inside the loop a setdefault of that key is then a no-op and an "
            "assignment changes its value, as in eager code", src)
    raise mutation.StateChangeError(
        f"the body of a loop whose condition is a tensor ({where(src)}) {how} the key {key!r} "
        f"of the dict {path}; in eager code the key is gone after the loop only when the loop "
        "ran at least once, which the tensor condition decides when the program runs, and one "
        "static program has one set of keys. Keep every key (set it before the loop) and "
        "change its value instead", src)


def dict_keys_of(v):
    """The keys of the dicts in `v` (nested in dicts, lists and tuples)."""
    if isinstance(v, dict):
        return {k: dict_keys_of(x) for k, x in v.items()}
    if type(v) in (list, tuple):
        return type(v)(dict_keys_of(x) for x in v)
    return None


def check_keys(path, before, after, src) -> None:
    """A dict in the loop state whose keys the body changes (`del d[k]`, `d.pop(k)`, a new
    key) cannot be one loop variable: a StateChangeError naming the key and the loop.
    `before`: the `dict_keys_of` of the value the body started from."""
    if isinstance(before, dict) and isinstance(after, dict):
        for k in before.keys() ^ after.keys():
            refuse_key_change(path, k, src, "removes" if k in before else "adds")
        for k in before:
            check_keys(f"{path}[{k!r}]", before[k], after[k], src)
    elif type(before) in (list, tuple) and type(after) is type(before) and len(before) == len(
            after):
        for j, (a, b) in enumerate(zip(before, after)):
            check_keys(f"{path}[{j}]", a, b, src)


def check_values_kept(path, original: dict, after, src) -> None:
    """A dict the loop does not carry (it holds a value that is no tensor or number, or
    nothing): the body may set a key and remove it again, but a value it leaves changed
    would be eager's only where the loop ran, which the program decides when it runs."""
    if type(after) is not dict:
        return
    for k, v in original.items():
        if k in after and after[k] is not v:
            held = next((x for x in original.values() if not _carriable(x)), None)
            what = f"the {type(held).__name__} {_short(held)}" if held is not None else \
                "such values"
            raise mutation.StateChangeError(
                f"{path}[{k!r}] is changed inside a loop whose condition is a tensor "
                f"({where(src)}), in a dict that also holds {what}: a graph loop carries a "
                "dict only when its values are tensors or Python numbers, so whether the "
                "value is the one before the loop (no trip) or the body's would be decided "
                "when the program runs. Keep such values in another dict, or change the key "
                "outside the loop", src)


def _carriable(v) -> bool:
    return type(v) in (bool, int, float) or hasattr(v, "dtype") and hasattr(v, "shape")


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
