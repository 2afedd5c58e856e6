"""`rt.amp`: automatic mixed precision (auto_cast, GradScaler, decorate).

>>> import runtime as rt
>>> model = rt.nn.Linear(4, 2)
>>> opt = rt.optimizer.SGD(0.1, parameters=model.parameters())
>>> scaler = rt.amp.GradScaler(init_loss_scaling=1024)
>>> with rt.amp.auto_cast():
...     loss = model(rt.ones([3, 4])).mean()
>>> scaler.scale(loss).backward()
>>> _ = scaler.minimize(opt, loss)
"""
from .grad_scaler import AmpScaler, GradScaler
from .precision import (
    AmpState,
    amp_guard,
    auto_cast,
    black_list,
    decorate,
    is_bfloat16_supported,
    is_float16_supported,
    state_key,
    white_list,
)

__all__ = ["AmpScaler", "AmpState", "GradScaler", "amp_guard", "auto_cast", "black_list",
           "decorate", "is_bfloat16_supported", "is_float16_supported", "state_key",
           "white_list"]
