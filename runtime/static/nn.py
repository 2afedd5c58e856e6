"""`rt.static.nn`: control flow for hand-written static programs (Paddle's paddle.static.nn)."""
from ..program.control_flow import cond, switch_case, while_loop

__all__ = ["cond", "switch_case", "while_loop"]
