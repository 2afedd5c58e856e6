"""Paddle constructor keywords that have no effect here, checked in one place.

Each keyword is accepted with the values that mean what this runtime already does, and refused
(NotImplementedError naming the layer, the keyword and the reason) otherwise, so no setting is
silently dropped. `docs/paddle_compat.md` lists them with the reasons.
"""
from __future__ import annotations

# keyword -> (the values that change nothing here, why)
REASONS = {
    "in_place": ((False, True), "results are the same; tensors are never reused in place"),
    "inplace": ((False, True), "results are the same; tensors are never reused in place"),
    "do_model_average_for_mean_and_var": (
        (False, True), "ModelAverage is not provided, so there is nothing to average"),
    "device": ((None, "cpu", "gpu", "gpu:0"),
               "parameters live on the current device (rt.set_device), one device per process"),
    "recompute_scale_factor": ((None, False, True),
                               "the output size is always floor(input size * scale_factor)"),
    "sparse": ((False, True), "gradients of embeddings are always dense"),
}


def check_ignored(layer: str, **given) -> None:
    """Refuse a value of an ignored keyword that would change the result."""
    for key, value in given.items():
        allowed, why = REASONS[key]
        if value not in allowed:
            raise NotImplementedError(f"{layer}: {key}={value!r} is not provided ({why})")


def refuse(layer: str, key: str, value, why: str) -> None:
    raise NotImplementedError(f"{layer}: {key}={value!r} is not provided ({why})")


def bias_attr_of(bias: bool, bias_attr):
    """Paddle 3's `bias=False` (PyTorch's spelling) is `bias_attr=False`."""
    return False if bias is False else bias_attr
