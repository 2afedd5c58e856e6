"""`rt.vision`: detection helpers (`rt.vision.ops.yolo_box`, `yolo_loss`), image classifiers
(`rt.vision.models`) and image transforms (`rt.vision.transforms`), with Paddle's names."""
from . import models, ops, transforms  # noqa: F401
