"""`rt.optimizer`: SGD, Momentum, Adam, AdamW, RMSProp, Adagrad, Adamax, Lamb and
learning-rate schedulers (`lr`).

>>> import runtime as rt
>>> w = rt.Parameter(rt.ones([2]).numpy())
>>> sched = rt.optimizer.lr.StepDecay(0.1, step_size=10)
>>> opt = rt.optimizer.Momentum(learning_rate=sched, momentum=0.9, parameters=[w])
"""
from . import lr
from .adagrad_adamax_lamb import Adagrad, Adamax, Lamb
from .algorithms import SGD, Adam, AdamW, Momentum, RMSProp
from .optimizer import Optimizer

__all__ = ["SGD", "Adam", "AdamW", "Momentum", "Optimizer", "RMSProp", "lr"]
__all__ += ["Adagrad", "Adamax", "Lamb"]
