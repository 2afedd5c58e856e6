"""`rt.vision`: detection helpers with Paddle's names (`rt.vision.ops.yolo_box`,
`rt.vision.ops.yolo_loss`)."""
from . import ops  # noqa: F401
