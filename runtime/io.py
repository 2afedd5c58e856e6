"""`rt.io`, Paddle's name (`paddle.io`) for the datasets and `DataLoader` of `runtime/data`.

>>> import runtime as rt
>>> rt.io.DataLoader is rt.data.DataLoader
True
"""
from .data import *  # noqa: F403
from .data import __all__  # noqa: F401
