"""The literals a converted training step's ops act on (`train_step`): the `.grad`
attribute of one eager tensor, and an optimizer's record of the parameters it updated."""
from __future__ import annotations


class GradSlot:
    """The `.grad` attribute of one eager tensor, as an op input (a literal)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __repr__(self):
        return f"{self.tensor.name or 'tensor'}.grad"

    def __eq__(self, other):
        return isinstance(other, GradSlot) and other.tensor is self.tensor

    def __hash__(self):
        return id(self.tensor)


class UpdateSlot:
    """An optimizer's record of which parameters it has updated, in order, for one parameter
    (an op input, a literal): `Optimizer.state_dict()` lists state in that order, as eager
    code makes it at each parameter's first update."""

    __slots__ = ("name", "optimizer")

    def __init__(self, optimizer, name: str):
        self.optimizer, self.name = optimizer, name

    def __repr__(self):
        return f"{type(self.optimizer).__name__}.updated[{self.name!r}]"

    def __eq__(self, other):
        return (isinstance(other, UpdateSlot) and other.optimizer is self.optimizer
                and other.name == self.name)

    def __hash__(self):
        return hash((id(self.optimizer), self.name))
