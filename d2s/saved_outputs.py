"""The output structure `d2s.save` records (`runtime.program.model_structure`): the program's
fetches, once each, and the node of the returned value, so that a loaded model returns what the
live converted call returns: Python numbers where it returns them, a list of dicts where a graph
loop appended dicts (`rows`), a dict with the keys present in this run (`flagged_dict`)."""
from __future__ import annotations

from runtime import pytree
from runtime.ops.array_number_kinds import holds_number_kinds, holds_strs, holds_tensor_items
from runtime.ops.arrays import holds_python_numbers
from runtime.program import model_structure
from runtime.program.variable import Variable

from .operators.lists import StructArray
from .operators.returned_keys import PresentKeys

_ROW_TAGS = {"numbers": "number", "number_pairs": "number_pair"}  # (one item of each row)


def encode(out) -> tuple:
    """(the fetches, the node of `out`)."""
    encoder = _Encoder()
    node = model_structure.encode(out, encoder.output, _is_rows)
    return encoder.outputs, node


def _is_rows(value) -> bool:
    """Tuples of the trace that stand for a list or a dict of the live call."""
    return isinstance(value, (StructArray, PresentKeys))


def _check_key(key) -> None:
    if not isinstance(key, (str, int)) or isinstance(key, bool):
        raise TypeError(f"a saved model's dict keys are strings or integers, not {key!r}")


class _Encoder:
    def __init__(self):
        self.outputs: list = []

    def fetch(self, v) -> int:
        """The index of fetch `v` (added once)."""
        index = next((k for k, o in enumerate(self.outputs) if o is v), len(self.outputs))
        if index == len(self.outputs):
            self.outputs.append(v)
        return index

    def output(self, leaf) -> dict:
        """The node of one leaf of the returned value."""
        if isinstance(leaf, PresentKeys):  # (a dict whose keys exist on some runs only)
            keys, values, flags, order = leaf
            for key in keys:
                _check_key(key)
            entries = [[key, model_structure.encode(v, self.output, _is_rows),
                        None if f is None else self.fetch(f)]
                       for key, v, f in zip(keys, values, flags, strict=True)]
            if order is not None and isinstance(order[0], str):  # (each key's rank:
                saved = ["ranks", [{"output": self.fetch(r)} if isinstance(r, Variable) else
                                   {"value": int(r)} for r in order[1]]]  # `key_ranks`)
            else:
                saved = None if order is None else [self.fetch(order[0]), list(order[1])]
            return {"flagged_dict": [entries, saved]}
        if isinstance(leaf, StructArray):  # (a list of structures: one array per leaf)
            item = pytree.unflatten(type(leaf).tree, list(tuple.__iter__(leaf)))
            return {"rows": model_structure.encode(item, self.row_output, _is_rows)}
        if isinstance(leaf, Variable) and (getattr(leaf, "str_item", False) or leaf.is_array
                                           and holds_strs(leaf)):
            raise TypeError("d2s.save: the function returns strs (or None) that only the run "
                            "decides (of a list whose length depends on a tensor, picked from "
                            "a table by a computed number, chosen by a tensor if): ids into "
                            "the strs the trace saw, which a saved model does not keep; return "
                            "an index into a tuple of the texts and read it after the call")
        if isinstance(leaf, Variable):
            index = self.fetch(leaf)
            if leaf.none_when is not None:  # (None on some runs: `none_or_tensor`)
                raise TypeError(
                    "d2s.save: the function returns a value that is None on some runs and a "
                    "tensor on others (an if whose condition is a tensor decides which), which "
                    "a saved model does not keep; return a tensor on every path (zeros) and a "
                    "bool tensor beside it saying whether it is set")
            if getattr(leaf, "dtype_when", None) is not None:  # (`branch_dtypes`)
                raise TypeError(
                    "d2s.save: the function returns a value whose dtype or shape only the run "
                    "decides (an if whose condition is a tensor; sum() of a list that may be "
                    "empty, with a start of another shape), which a saved model does not keep; "
                    "give it one dtype and shape on every path (`rt.cast(v, ...)`, a start of "
                    "the result's shape)")
            if leaf.number_when is not None:  # (a number on some paths, `number_or_tensor`)
                return {"number_or_tensor": [index, self.fetch(leaf.number_when),
                                             self.fetch(leaf.number_value)]}
            flag = leaf.float_when if leaf.python_scalar else None
            is_bool = leaf.bool_when if leaf.python_scalar else None  # (a bool on some paths)
            if is_bool is not None and not leaf.is_array:
                return {"number_kind": [index, None if flag is None else self.fetch(flag),
                                        self.fetch(is_bool)]}
            if flag is not None and not leaf.is_array:  # (`sum()` of a list of floats that
                return {"number_kind": [index, self.fetch(flag)]}  # may be empty: the int start)
            if leaf.python_scalar and not leaf.is_array and not getattr(
                    leaf, "mixed_number", False):  # (as `running.Entry.python_out`)
                return {"number": index}
            if leaf.is_array and holds_tensor_items(leaf):  # (`operators/tensor_items.py`)
                raise TypeError("d2s.save: the function returns a list of Python numbers and "
                                "tensors whose length depends on a tensor; a saved model "
                                "returns lists of tensors or of numbers: return one of each")
            if leaf.is_array and holds_number_kinds(leaf):  # (each item's own type)
                return {"number_pairs": index}
            if leaf.is_array and holds_python_numbers(leaf):  # (as `running.Entry`'s)
                return {"numbers": index}
            return {"output": index}
        if leaf is None or isinstance(leaf, (bool, int, float, str)):
            return {"value": leaf}
        raise TypeError(f"d2s.save: the function returns a {type(leaf).__name__}; a saved "
                        "model returns tensors, numbers and strings in lists, tuples and dicts")

    def row_output(self, leaf) -> dict:
        """The node of an array leaf of a list of structures: one item per row."""
        if isinstance(leaf, StructArray):
            raise TypeError("d2s.save: the function returns a list of structures whose length "
                            "depends on a tensor, nested in another one; a saved model keeps "
                            "one such level: return the inner lists as tensors")
        (tag, index), = self.output(leaf).items()
        return {_ROW_TAGS.get(tag, tag): index}
