"""`Layer`: the base class of every model part, with Paddle 2.x semantics.

A Layer owns three ordered registries, filled by plain attribute assignment:

- `_parameters`: `Parameter`s (trainable tensors with unique names such as `linear_0.w_0`;
  static programs refer to parameters by these names),
- `_sub_layers`: child Layers (their parameters are reached through `named_parameters`),
- `_buffers`: non-trainable state (BatchNorm's running statistics). `register_buffer` makes a
  persistable buffer (saved in `state_dict`); assigning a Tensor attribute makes a
  non-persistable one, as in Paddle.

`forward` must use only ops (no `.numpy()`, no Python branching on tensor values) so that the
same code runs eagerly and while `d2s` traces it into a static program.
"""
from __future__ import annotations

import copy
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator

from .. import backend
from ..core import VariableBase, active_builder
from ..dtypes import DType, convert_dtype, default_float
from ..parameter import Parameter, unique_name
from ..tensor import Tensor
from .initializer import Constant, Initializer, XavierUniform, global_initializer
from .param_attr import ParamAttr


def _snake(name: str) -> str:
    """Paddle's name scope for a class: 'Linear' -> 'linear', 'BatchNorm2D' -> 'batch_norm2_d'
    (Paddle's own conversion, so parameter names match Paddle's)."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


class _Registry(OrderedDict):
    """One of a layer's ordered registries (parameters, sublayers, buffers). Every entry is
    mirrored into the layer's `__dict__`, so that reading `self.fc1` or `self.weight` in a
    forward pass is a plain attribute lookup rather than a failed one plus `__getattr__`
    (a few microseconds per access, on every eager step)."""

    def __init__(self, attrs: dict):
        super().__init__()
        self._attrs = attrs

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._attrs[key] = value

    def __delitem__(self, key):
        super().__delitem__(key)
        self._attrs.pop(key, None)

    def pop(self, key, *default):
        self._attrs.pop(key, None)
        return super().pop(key, *default)

    def clear(self):
        for key in self:
            self._attrs.pop(key, None)
        super().clear()

    def __reduce__(self):
        # pickled as its items; the copy mirrors into a scratch dict until Layer.__setstate__
        # adopts it (as for deepcopy below)
        return _Registry, ({},), None, None, iter(list(self.items()))

    def __deepcopy__(self, memo):
        # the copy mirrors into a scratch dict until Layer.__setstate__ adopts it
        new = _Registry({})
        memo[id(self)] = new
        for key, value in self.items():
            new[key] = copy.deepcopy(value, memo)
        return new


class HookRemoveHelper:
    """The handle returned by `register_forward_*_hook`; `.remove()` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self._id = HookRemoveHelper._next_id
        HookRemoveHelper._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self._id, None)


def _in_graph_block() -> bool:
    """While tracing, whether a graph branch or loop body is being built: a buffer assigned
    a graph value there is written in place; elsewhere it is rebound, as eager code rebinds
    it."""
    b = active_builder()
    return b is None or b.block is not b.program.global_block()


class Layer:
    """Base class for layers and models.

    >>> import runtime as rt
    >>> class MLP(rt.nn.Layer):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = rt.nn.Linear(4, 8)
    ...         self.fc2 = rt.nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(rt.tanh(self.fc1(x)))
    >>> model = MLP()
    >>> list(model.state_dict())
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    >>> model(rt.ones([3, 4])).shape
    [3, 2]
    """

    def __init__(self, name_scope: str | None = None, dtype=None):
        d = self.__dict__
        d["training"] = True
        d["_full_name"] = unique_name(name_scope or _snake(type(self).__name__))
        d["_dtype"] = (default_float() if dtype is None else convert_dtype(dtype)).name
        d["_parameters"] = _Registry(d)
        d["_sub_layers"] = _Registry(d)
        d["_buffers"] = _Registry(d)
        d["_non_persistable_buffer_names"] = set()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_post_hooks"] = OrderedDict()

    # ---- calling ----------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *inputs, **kwargs):
        d = self.__dict__
        pre = d.get("_forward_pre_hooks")
        if pre is None:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__()")
        if pre:
            for hook in list(pre.values()):
                result = hook(self, inputs)
                if result is not None:
                    inputs = result if isinstance(result, tuple) else (result,)
        outputs = self.forward(*inputs, **kwargs)
        if d["_forward_post_hooks"]:
            for hook in list(d["_forward_post_hooks"].values()):
                result = hook(self, inputs, outputs)
                if result is not None:
                    outputs = result
        return outputs

    def register_forward_pre_hook(self, hook: Callable) -> HookRemoveHelper:
        """`hook(layer, inputs)` runs before `forward`; a non-None result replaces the inputs."""
        handle = HookRemoveHelper(self._forward_pre_hooks)
        self._forward_pre_hooks[handle._id] = hook
        return handle

    def register_forward_post_hook(self, hook: Callable) -> HookRemoveHelper:
        """`hook(layer, inputs, outputs)` runs after `forward`; a non-None result replaces
        the outputs."""
        handle = HookRemoveHelper(self._forward_post_hooks)
        self._forward_post_hooks[handle._id] = hook
        return handle

    # ---- attribute registration -------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params, layers, buffers = d.get("_parameters"), d.get("_sub_layers"), d.get("_buffers")
        if isinstance(value, Parameter):
            self._register(params, name, value)
        elif params is not None and name in params:
            self._clear(params, name, value, f"parameter '{name}' of a Layer", "a Parameter")
        elif isinstance(value, Layer):
            self._register(layers, name, value)
        elif layers is not None and name in layers:
            self._clear(layers, name, value, f"sublayer '{name}'", "a Layer")
        elif buffers is not None and name in buffers:
            old = buffers[name]
            if isinstance(value, VariableBase) and value.stop_gradient and isinstance(
                    old, Tensor) and _in_graph_block() and _fits(value, old):
                old.set_value(value)  # tracing: write the buffer's persistable variable
            elif value is None or isinstance(value, (Tensor, VariableBase)):
                # (while tracing, a graph value outside graph branches and loops, or of another
                # shape or dtype: rebound, as eager rebinds the buffer to the new tensor; d2s
                # writes it back after each call, a new Tensor as eager's)
                buffers[name] = value
            else:
                raise TypeError(f"cannot assign {type(value).__name__} to buffer '{name}': "
                                "expected a Tensor or None")
        elif isinstance(value, Tensor):
            self._register(buffers, name, value)
            self._non_persistable_buffer_names.add(name)
        else:
            object.__setattr__(self, name, value)

    def _register(self, registry, name, value):
        """Make `value` the one thing `name` is: in `registry`, in no other."""
        if registry is None:
            raise AttributeError(f"cannot assign '{name}' before {type(self).__name__}.__init__ "
                                 "calls super().__init__()")
        self._forget(name)
        registry[name] = value

    @staticmethod
    def _clear(registry, name, value, what: str, expected: str):
        """A registered parameter or sublayer may be set to None (it stays registered)."""
        if value is not None:
            raise TypeError(f"cannot assign {type(value).__name__} to {what}: "
                            f"expected {expected} or None")
        registry[name] = None

    def _forget(self, name):
        for registry in (self._parameters, self._sub_layers, self._buffers):
            registry.pop(name, None)
        self.__dict__.pop(name, None)
        self._non_persistable_buffer_names.discard(name)

    def __setstate__(self, state: dict) -> None:
        """Restore a copied layer; its registries mirror into its own __dict__ again."""
        self.__dict__.update(state)
        for key in ("_parameters", "_sub_layers", "_buffers"):
            registry = state.get(key)
            if isinstance(registry, _Registry):
                registry._attrs = self.__dict__

    def __getattr__(self, name: str):
        d = self.__dict__
        for key in ("_parameters", "_sub_layers", "_buffers"):
            registry = d.get(key)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for key in ("_parameters", "_sub_layers", "_buffers"):
            registry = self.__dict__.get(key)
            if registry is not None and name in registry:
                del registry[name]
                self._non_persistable_buffer_names.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._sub_layers)
                      | set(self._buffers))

    # ---- creating and adding state ----------------------------------------------------------
    def create_parameter(self, shape, attr=None, dtype=None, is_bias: bool = False,
                         default_initializer: Initializer | None = None) -> Parameter | None:
        """A new Parameter, initialised by `attr.initializer`, else the global initializer
        (`set_global_initializer`), else `default_initializer`, else Constant(0) for a bias and
        XavierUniform for a weight. Returns None if `attr` is False.

        `dtype` may also be given second (`create_parameter([3], 'float32')`).
        """
        if dtype is None and isinstance(attr, (str, DType)) and _is_dtype(attr):
            attr, dtype = None, attr
        attr = ParamAttr.to_attr(attr)
        if attr is False:
            return None
        init = (attr.initializer or global_initializer(is_bias) or default_initializer
                 or (Constant(0.0) if is_bias else XavierUniform()))
        dtype = convert_dtype(dtype or self._dtype)
        shape = [int(s) for s in shape]
        name = attr.name or unique_name(f"{self._full_name}.{'b' if is_bias else 'w'}")
        param = Parameter(backend.asarray(init.generate(shape, dtype)), name=name,
                          trainable=attr.trainable)
        param.optimize_attr = {"learning_rate": attr.learning_rate}
        param.regularizer = attr.regularizer
        param.need_clip = attr.need_clip
        param.is_distributed = False
        return param

    def add_parameter(self, name: str, parameter: Parameter | None) -> Parameter | None:
        """Register `parameter` under `name` (like `self.name = parameter`)."""
        _check_name(name, "add_parameter")
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(f"add_parameter('{name}'): expected a Parameter, got "
                            f"{type(parameter).__name__}")
        if name in self.__dict__ and name not in self._parameters:
            raise KeyError(f"add_parameter: '{name}' already exists on {type(self).__name__}")
        self._parameters[name] = parameter
        return parameter

    def add_sublayer(self, name: str, sublayer: Layer | None) -> Layer | None:
        """Register `sublayer` under `name` (like `self.name = sublayer`)."""
        if sublayer is not None and not isinstance(sublayer, Layer):
            raise TypeError(f"add_sublayer('{name}'): expected a Layer, got "
                            f"{type(sublayer).__name__}")
        self._sub_layers[str(name)] = sublayer
        return sublayer

    def register_buffer(self, name: str, tensor: Tensor | None,
                        persistable: bool = True) -> None:
        """Register non-trainable state; persistable buffers are part of `state_dict`."""
        _check_name(name, "register_buffer")
        if isinstance(tensor, VariableBase) and name in self._buffers:  # (in converted code:
            self.__setattr__(name, tensor)  # a buffer registered again, rebound as assigned)
            _persistable(self, name, persistable)
            return
        if isinstance(tensor, VariableBase):
            raise TypeError(
                f"register_buffer('{name}') of a value the converted code computes, for a "
                "buffer the layer does not have yet: register it in __init__ (or before the "
                "first call), then assign or register it again in forward")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer('{name}'): expected a Tensor or None, got "
                            f"{type(tensor).__name__}")
        if name in self._parameters or name in self._sub_layers or (
                name in self.__dict__ and name not in self._buffers):
            raise KeyError(f"register_buffer: '{name}' already exists on {type(self).__name__}")
        if tensor is not None and tensor.name is None:
            tensor.name = unique_name(f"{self._full_name}.{name.lstrip('_')}")
        self._buffers[name] = tensor
        _persistable(self, name, persistable)

    # ---- traversal --------------------------------------------------------------------------
    def named_sublayers(self, prefix: str = "", include_self: bool = False,
                        layers_set: set | None = None) -> Iterator[tuple[str, Layer]]:
        """(dotted name, layer) for every layer below this one, depth first, each once."""
        if layers_set is None:
            layers_set = set()
        if include_self and id(self) not in layers_set:
            layers_set.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None or id(layer) in layers_set:
                continue
            name = f"{prefix}.{key}" if prefix else key
            layers_set.add(id(layer))
            yield name, layer
            yield from layer.named_sublayers(name, False, layers_set)

    def sublayers(self, include_self: bool = False) -> list[Layer]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self) -> Iterator[tuple[str, Layer]]:
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield name, layer

    def children(self) -> Iterator[Layer]:
        for _, layer in self.named_children():
            yield layer

    def _named_members(self, registry: str, prefix: str, include_sublayers: bool,
                       persistable_only: bool = False):
        seen = set()
        layers = (self.named_sublayers(prefix, include_self=True) if include_sublayers
                  else [(prefix, self)])
        for layer_prefix, layer in layers:
            skip = layer._non_persistable_buffer_names if persistable_only else ()
            for key, value in getattr(layer, registry).items():
                if value is None or id(value) in seen or key in skip:
                    continue
                seen.add(id(value))
                yield (f"{layer_prefix}.{key}" if layer_prefix else key), value

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True
                         ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, e.g. ('fc1.weight', ...); shared ones once."""
        return self._named_members("_parameters", prefix, include_sublayers)

    def parameters(self, include_sublayers: bool = True) -> list[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, include_sublayers)

    def buffers(self, include_sublayers: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn: Callable[[Layer], None]) -> Layer:
        """Call `fn` on every sublayer (children first) and then on this layer."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    def full_name(self) -> str:
        """This layer's unique name, e.g. 'linear_0' (the prefix of its parameter names)."""
        return self._full_name

    # ---- state ------------------------------------------------------------------------------
    def state_dict(self, destination=None, include_sublayers: bool = True,
                   structured_name_prefix: str = "") -> OrderedDict:
        """Parameters and persistable buffers by structured name ('fc1.weight'), in
        registration order. The values are the layer's own tensors, not copies."""
        out = OrderedDict() if destination is None else destination
        seen = set()
        layers = (self.named_sublayers(include_self=True) if include_sublayers else [("", self)])
        for layer_prefix, layer in layers:
            for key, value in list(layer._parameters.items()) + [
                    (k, v) for k, v in layer._buffers.items()
                    if k not in layer._non_persistable_buffer_names]:
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                name = f"{layer_prefix}.{key}" if layer_prefix else key
                out[structured_name_prefix + name] = value
        return out

    def set_state_dict(self, state_dict: dict, use_structured_name: bool = True
                       ) -> tuple[list, list]:
        """Copy values into this layer's parameters and buffers (the same objects stay).

        Keys are structured names (or parameter names with `use_structured_name=False`).
        A shape or dtype mismatch raises, naming the key. Returns (missing_keys,
        unexpected_keys).
        """
        own = self.state_dict()
        by_key = own if use_structured_name else {t.name: t for t in own.values()}
        missing = [k for k in by_key if k not in state_dict]
        unexpected = [k for k in state_dict if k not in by_key]
        updates = []
        for key, target in by_key.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            arr = value._data if isinstance(value, Tensor) else backend.asarray(value)
            if list(arr.shape) != target.shape:
                raise ValueError(f"set_state_dict: '{key}' has shape {list(arr.shape)} in the "
                                 f"state dict but {target.shape} in {type(self).__name__}")
            if arr.dtype != target.dtype.np:
                raise TypeError(
                    f"set_state_dict: '{key}' has dtype {arr.dtype} in the state dict but "
                    f"{target.dtype.name} in {type(self).__name__}; cast the value, or the "
                    f"layer with layer.to(dtype='{arr.dtype}')")
            updates.append((target, arr))
        for target, arr in updates:  # all checked first, so a bad key changes nothing
            target.set_value(arr.copy())
        return missing, unexpected

    set_dict = set_state_dict
    load_dict = set_state_dict

    # ---- modes and conversion ---------------------------------------------------------------
    def train(self) -> Layer:
        for layer in self.sublayers(include_self=True):
            layer.training = True
        return self

    def eval(self) -> Layer:
        for layer in self.sublayers(include_self=True):
            layer.training = False
        return self

    def to(self, device=None, dtype=None, blocking=None) -> Layer:
        """Cast floating parameters and buffers to `dtype` and/or move them to `device`
        ('cpu', 'gpu', 'gpu:N'), in place: the Parameter objects stay the same."""
        target = convert_dtype(dtype).np if dtype is not None else None
        if dtype is not None and not convert_dtype(dtype).is_floating:
            raise ValueError(f"Layer.to: dtype must be a floating type, got {dtype!r}")
        prev = backend.get_device()
        try:
            if device is not None:
                backend.set_device(device)
            for t in self.parameters() + self.buffers():
                arr = t._data
                if target is not None and convert_dtype(arr.dtype).is_floating:
                    arr = arr.astype(target)
                if device is not None:
                    arr = backend.asarray(backend.to_numpy(arr))
                if arr is not t._data:
                    t._data = arr
                    t._version += 1
        finally:
            backend.set_device(prev)
        if target is not None:
            for layer in self.sublayers(include_self=True):
                layer.__dict__["_dtype"] = convert_dtype(dtype).name
        return self

    def clear_gradients(self) -> None:
        """Drop the gradients of all parameters."""
        for p in self.parameters():
            p.clear_grad()

    # ---- printing ---------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The part inside `Name(...)` in `repr`; layers override it with their config."""
        return ""

    def __repr__(self):
        lines = [f"({name}): " + _indent(repr(layer), 2)
                 for name, layer in self._sub_layers.items()]
        extra = self.extra_repr()
        text = type(self).__name__ + "("
        if extra:
            extra_lines = extra.split("\n")
            text += extra if len(extra_lines) == 1 else "\n  " + "\n  ".join(extra_lines) + "\n"
        if lines:
            text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _indent(text: str, n: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * n + line for line in rest])


def _check_name(name, where):
    if not isinstance(name, str):
        raise TypeError(f"{where}: the name must be a str, got {type(name).__name__}")
    if "." in name or not name:
        raise KeyError(f"{where}: the name must be non-empty and contain no '.', got {name!r}")


def _is_dtype(value) -> bool:
    try:
        convert_dtype(value)
        return True
    except (TypeError, ValueError):
        return False


def _fits(value: VariableBase, old: Tensor) -> bool:
    """Whether a graph value can be written into the buffer `old` in place: its dtype, and its
    shape where the trace knows it (-1: known when the program runs)."""
    shape = value._static_shape
    return value.dtype == old.dtype and len(shape) == len(old.shape) and all(
        a in (b, -1) for a, b in zip(shape, old.shape))


def _persistable(layer, name: str, persistable: bool) -> None:
    if persistable:
        layer._non_persistable_buffer_names.discard(name)
    else:
        layer._non_persistable_buffer_names.add(name)
