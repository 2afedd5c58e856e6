"""Containers: `Sequential`, `LayerList`, `LayerDict`, `ParameterList` (Paddle semantics).

They are ordinary Layers whose children are named '0', '1', ... (or by key), so their
parameters appear in `state_dict` as 'layers.0.weight'. Indexing and iteration are Python
operations on the container, so a `for layer in self.layers:` loop in a converted `forward`
simply unrolls.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from ..parameter import Parameter
from .layer import Layer


def _normalise_index(index: int, n: int, what: str) -> int:
    if not -n <= index < n:
        raise IndexError(f"{what} index {index} is out of range for length {n}")
    return index % n


class Sequential(Layer):
    """Run layers one after another. Takes layers, or (name, layer) pairs.

    >>> import runtime as rt
    >>> model = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 2))
    >>> model(rt.ones([3, 4])).shape
    [3, 2]
    """

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (OrderedDict, dict)):
            layers = tuple(layers[0].items())
        if layers and isinstance(layers[0], (list, tuple)):
            for name, layer in layers:
                self.add_sublayer(name, layer)
        else:
            for i, layer in enumerate(layers):
                self.add_sublayer(str(i), layer)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(*list(self._sub_layers.values())[index])
        if isinstance(index, str):
            return self._sub_layers[index]
        keys = list(self._sub_layers)
        return self._sub_layers[keys[_normalise_index(index, len(keys), "Sequential")]]

    def __setitem__(self, index, layer):
        keys = list(self._sub_layers)
        key = index if isinstance(index, str) else keys[
            _normalise_index(index, len(keys), "Sequential")]
        self.add_sublayer(key, layer)

    def __delitem__(self, index):
        keys = list(self._sub_layers)
        targets = keys[index] if isinstance(index, slice) else [
            keys[_normalise_index(index, len(keys), "Sequential")]]
        for key in targets:
            del self._sub_layers[key]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def forward(self, input):
        for layer in self._sub_layers.values():
            input = layer(input)
        return input


class LayerList(Layer):
    """A list of sublayers, registered under their positions.

    >>> import runtime as rt
    >>> blocks = rt.nn.LayerList([rt.nn.Linear(4, 4) for _ in range(3)])
    >>> len(blocks), len(blocks.parameters())
    (3, 6)
    """

    def __init__(self, sublayers: Iterable[Layer] | None = None):
        super().__init__()
        for layer in sublayers or ():
            self.append(layer)

    def _renumber(self, layers):
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def __getitem__(self, index):
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            return LayerList(layers[index])
        return layers[_normalise_index(index, len(layers), "LayerList")]

    def __setitem__(self, index, layer):
        index = _normalise_index(index, len(self._sub_layers), "LayerList")
        self.add_sublayer(str(index), layer)

    def __delitem__(self, index):
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            del layers[index]
        else:
            del layers[_normalise_index(index, len(layers), "LayerList")]
        self._renumber(layers)

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, sublayer: Layer) -> LayerList:
        self.add_sublayer(str(len(self._sub_layers)), sublayer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._renumber(layers)

    def extend(self, sublayers: Iterable[Layer]) -> LayerList:
        for layer in sublayers:
            self.append(layer)
        return self


class LayerDict(Layer):
    """An ordered dict of sublayers.

    >>> import runtime as rt
    >>> heads = rt.nn.LayerDict({'cls': rt.nn.Linear(4, 2), 'reg': rt.nn.Linear(4, 1)})
    >>> list(heads.keys())
    ['cls', 'reg']
    """

    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, sublayer: Layer) -> None:
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key: str) -> None:
        del self._sub_layers[key]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def __contains__(self, key) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        self._sub_layers.clear()

    def pop(self, key: str) -> Layer:
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers) -> None:
        items = sublayers.items() if hasattr(sublayers, "items") else sublayers
        for pair in items:
            if len(pair) != 2:
                raise ValueError(f"LayerDict.update: expected (key, layer) pairs, got {pair!r}")
            self.add_sublayer(pair[0], pair[1])


class ParameterList(Layer):
    """A list of Parameters, registered under their positions.

    >>> import runtime as rt
    >>> layer = rt.nn.Layer()
    >>> params = rt.nn.ParameterList([layer.create_parameter([2, 2]) for _ in range(2)])
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
    """

    def __init__(self, parameters: Iterable[Parameter] | None = None):
        super().__init__()
        for p in parameters or ():
            self.append(p)

    def __getitem__(self, index):
        params = list(self._parameters.values())
        if isinstance(index, slice):
            return params[index]
        return params[_normalise_index(index, len(params), "ParameterList")]

    def __setitem__(self, index: int, param: Parameter) -> None:
        index = _normalise_index(index, len(self._parameters), "ParameterList")
        setattr(self, str(index), param)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, parameter: Parameter) -> ParameterList:
        self.add_parameter(str(len(self._parameters)), parameter)
        return self
