"""Small models the deploy tests save: a Layer with BatchNorm and Dropout, whose output
depends on its mode (saved in both, from Python and from the command line), and a function
whose one large intermediate value a test enlarges in the saved file."""
import runtime as rt


class Head(rt.nn.Layer):
    def __init__(self, width=4, p=0.5):
        super().__init__()
        self.fc = rt.nn.Linear(width, width)
        self.bn = rt.nn.BatchNorm1D(width)
        self.drop = rt.nn.Dropout(p)

    def forward(self, x):
        return self.drop(rt.nn.functional.relu(self.bn(self.fc(x))))


def filled_sum(x):
    return rt.sum(rt.full([30, 40], 2.0)) + x
