"""LeNet-5 for digit images: the model of `d2s demo`, which ships inside the package
(`d2s.demo.lenet`); the zoo re-exports it."""
from d2s.demo.lenet import LeNet  # noqa: F401
