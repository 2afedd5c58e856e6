"""How `rt.Model` reaches `d2s.to_static` although `runtime/` never imports `d2s`.

Paddle's `hapi.Model` imports `paddle.jit` (one package). Here the converter lives above the
runtime (tests/test_layering.py: `runtime/` never imports `d2s`), so the dependency is
inverted: `import d2s` registers its converter and its inference-model writer here, and
`Model(network, inputs=[InputSpec...])` asks for them. Without `import d2s` a Model given
`inputs` raises `ConverterMissingError` saying so, rather than silently training eagerly.
A network already converted (`rt.Model(d2s.to_static(net))`) needs no registration: its
`forward` is the converted function, which `Model` calls like any forward.
"""
from __future__ import annotations

from collections.abc import Callable

# what `d2s` registers: convert(layer, input_spec) -> layer; save(layer, path, input_spec)
_REGISTERED: dict[str, Callable] = {}


class ConverterMissingError(RuntimeError):
    """`Model(..., inputs=...)` or `Model.save(path, training=False)` needs `d2s`, which has
    not been imported. Fix: `import d2s` before building the Model, or pass `inputs=None` to
    train eagerly."""


def register(convert: Callable, save_inference: Callable) -> None:
    """Called by `d2s` on import: `convert(layer, input_spec)` converts a Layer in place and
    returns it; `save_inference(layer, path, input_spec)` writes an inference model."""
    _REGISTERED["convert"] = convert
    _REGISTERED["save"] = save_inference


def is_converted(network) -> bool:
    """Whether `network`'s forward is already a converted (static) function."""
    return bool(getattr(network.__dict__.get("forward"), "__d2s_static_function__", False))


def _registered(what: str, why: str) -> Callable:
    if what not in _REGISTERED:
        raise ConverterMissingError(
            f"{why} needs the d2s converter: add `import d2s` before it (runtime does not "
            "import d2s itself; see runtime/hapi/static_converter.py)")
    return _REGISTERED[what]


def convert(network, input_spec: list):
    """`network` converted with `d2s.to_static(network, input_spec=input_spec)`; a network
    converted already is returned as it is."""
    if is_converted(network):
        return network
    return _registered("convert", "rt.Model(network, inputs=[...])")(network, input_spec)


def save_inference(network, path: str, input_spec: list | None) -> None:
    _registered("save", "Model.save(path, training=False)")(network, path, input_spec)
