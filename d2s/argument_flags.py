"""What a call does to the Tensors it is given besides their values: `x.stop_gradient =
False` (or `True`) on an argument inside converted code changes the caller's tensor, as eager
code does (a saliency map or an adversarial step asks for the input's gradient in the
function), and an in-place write into an argument that needs a gradient is refused, as eager
code refuses it. Used by `running.Entry.run`."""
from __future__ import annotations


def flagged_arguments(feeds: list) -> list:
    """(feed index, the flag the traced code left) of each fed tensor whose `stop_gradient`
    the traced code changed (`tracing.Fed` notes the flag each was fed with)."""
    return [(k, v._stop_gradient) for k, v in enumerate(feeds)
            if "fed_stop" in v.__dict__ and v._stop_gradient != v.__dict__["fed_stop"]]


def set_flags(inputs, flags: list, value: bool) -> None:
    """Set the caller's tensors' flags that the call sets to `value`: False before the run
    (the run records their gradient path), True after it (ops before the line had it)."""
    for k, flag in flags:
        if flag is value:
            inputs[k].stop_gradient = flag


def check_writable(inputs, arg_writes, names, function_name: str) -> list:
    """The Tensors the call writes in place. Eager code refuses an in-place write to a leaf
    that requires grad; so does the call."""
    for k in arg_writes:
        t = inputs[k]
        if not t.stop_gradient and t._node is None:
            raise RuntimeError(
                f"in-place assignment to a leaf tensor that requires grad (stop_gradient="
                f"False) would lose its gradient: {function_name} writes its tensor "
                f"argument {names[k]!r} in place; assign to a clone() instead")
    return [inputs[k] for k in arg_writes]
