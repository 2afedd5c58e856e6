"""rt.summary and rt.flops: Paddle's documented LeNet figures, each FLOP rule against its
formula, and the same answers for a converted network (which stays converted)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn


class PaddleDocLeNet(nn.Layer):
    """The LeNet of Paddle's `paddle.flops` / `paddle.summary` docs (1x28x28 inputs)."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84),
                                nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        x = rt.flatten(x, 1)
        return self.fc(x)


def test_flops_of_the_doc_lenet_are_paddles(capsys):
    # Paddle's docs print "Total Flops: 347560     Total Params: 61610" for this network.
    assert rt.flops(PaddleDocLeNet(), [1, 1, 28, 28], print_detail=True) == 347560
    out = capsys.readouterr().out
    assert "Total Flops: 347560     Total Params: 61610" in out
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
            if line.startswith("|")][1:]
    assert [r[1:] for r in rows] == [
        ["[1, 1, 28, 28]", "[1, 6, 28, 28]", "60", "47040"],
        ["[1, 6, 28, 28]", "[1, 6, 28, 28]", "0", "0"],
        ["[1, 6, 28, 28]", "[1, 6, 14, 14]", "0", "0"],
        ["[1, 6, 14, 14]", "[1, 16, 10, 10]", "2416", "241600"],
        ["[1, 16, 10, 10]", "[1, 16, 10, 10]", "0", "0"],
        ["[1, 16, 10, 10]", "[1, 16, 5, 5]", "0", "0"],
        ["[1, 400]", "[1, 120]", "48120", "48000"],
        ["[1, 120]", "[1, 84]", "10164", "10080"],
        ["[1, 84]", "[1, 10]", "850", "840"]]
    assert "Cannot find suitable count function for MaxPool2D" in out


def test_flops_rules_one_layer_at_a_time(capsys):
    x = [2, 4, 6, 6]
    n_in = int(np.prod(x))
    cases = [
        (nn.Conv2D(4, 8, 3, groups=2, bias_attr=False), 2 * 8 * 4 * 4 * (4 // 2 * 9)),
        (nn.BatchNorm2D(4), 2 * n_in),
        (nn.AvgPool2D(2), 2 * 4 * 3 * 3),
        (nn.AdaptiveAvgPool2D(2), 2 * 4 * 2 * 2 * (3 * 3 + 1)),
        (nn.LeakyReLU(0.1), n_in),
        (nn.ReLU6(), 0),
        (nn.Dropout(0.5), 0),
    ]
    for layer, expected in cases:
        assert rt.flops(layer, x) == expected, type(layer).__name__
    assert rt.flops(nn.Linear(6, 3), [5, 6]) == 6 * 5 * 3
    doubled = rt.flops(nn.Sigmoid(), x, custom_ops={nn.Sigmoid: lambda m, i, o: 2 * o.size})
    assert doubled == 2 * n_in
    capsys.readouterr()


def test_summary_of_the_doc_lenet(capsys):
    net = PaddleDocLeNet()
    assert rt.summary(net, (1, 1, 28, 28)) == {"total_params": 61610, "trainable_params": 61610}
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().split(" ")[0]
            .rsplit("-", 1)[-1].isdigit()]
    assert [r[0] for r in rows] == ["Conv2D-1", "ReLU-1", "MaxPool2D-1", "Conv2D-2", "ReLU-2",
                                    "MaxPool2D-2", "Linear-1", "Linear-2", "Linear-3"]
    assert " ".join(rows[3][1:]) == "[[1, 6, 14, 14]] [1, 16, 10, 10] 2,416"
    assert "Total params: 61,610" in out and "Non-trainable params: 0" in out
    assert net.training  # summary ran in eval mode and put the mode back


def test_summary_counts_frozen_parameters_and_several_inputs(capsys):
    class TwoInputs(nn.Layer):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.proj = nn.Linear(4, 2)
            self.embed.weight.stop_gradient = True

        def forward(self, ids, scale):
            return self.proj(self.embed(ids)) * scale

    info = rt.summary(TwoInputs(), [(3, 5), (3, 5, 1)], dtypes=["int64", "float32"])
    assert info == {"total_params": 40 + 10, "trainable_params": 10}
    out = capsys.readouterr().out
    assert "Non-trainable params: 40" in out
    assert "[[3, 5]]" in out and "[3, 5, 2]" in out
    with pytest.raises(ValueError, match="2 input shapes but 3 dtypes"):
        rt.summary(TwoInputs(), [(3, 5), (3, 5, 1)], dtypes=["int64", "float32", "float32"])


def test_a_converted_network_is_measured_eagerly_and_stays_converted(capsys):
    net = PaddleDocLeNet()
    eager_info = rt.summary(net, (1, 1, 28, 28))
    static = d2s.to_static(net, input_spec=[rt.static.InputSpec([None, 1, 28, 28])])
    static(rt.ones([2, 1, 28, 28]))  # a program exists: hooks must not be skipped by it
    assert rt.summary(static, rt.static.InputSpec([None, 1, 28, 28])) == eager_info
    assert rt.flops(static, [1, 1, 28, 28]) == 347560
    assert getattr(static.forward, "__d2s_static_function__", False)
    capsys.readouterr()


def test_only_layers_are_measured():
    program = rt.static.Program()
    with pytest.raises(TypeError, match="flops: net must be an rt.nn.Layer, got Program"):
        rt.flops(program, [1, 4])
    with pytest.raises(TypeError, match="summary: net must be an rt.nn.Layer"):
        rt.summary(lambda x: x, (1, 4))


class SharedAndOwn(nn.Layer):
    """A Linear applied twice, and a parameter of the network's own."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.scale = self.create_parameter([4])

    def forward(self, x):
        return self.body(self.body(x)) * self.scale


def test_shared_layers_and_own_parameters_count_once(capsys):
    info = rt.summary(SharedAndOwn(), (2, 4))
    assert info == {"total_params": 20 + 4, "trainable_params": 24}
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()
            if line.strip().startswith(("Linear-", "SharedAndOwn-"))]
    assert [(r[0], r[-1]) for r in rows] == [("Linear-1", "20"), ("Linear-2", "0"),
                                            ("SharedAndOwn-1", "4")]
    assert rt.flops(SharedAndOwn(), [2, 4]) == 2 * (4 * 2 * 4)  # two calls of the Linear
    assert "Total Params: 24" in capsys.readouterr().out
