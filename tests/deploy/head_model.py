"""A small Layer with BatchNorm and Dropout, whose output depends on its mode (the deploy
tests save it in both, from Python and from the command line)."""
import runtime as rt


class Head(rt.nn.Layer):
    def __init__(self, width=4, p=0.5):
        super().__init__()
        self.fc = rt.nn.Linear(width, width)
        self.bn = rt.nn.BatchNorm1D(width)
        self.drop = rt.nn.Dropout(p)

    def forward(self, x):
        return self.drop(rt.nn.functional.relu(self.bn(self.fc(x))))
