"""Every layer of `rt.nn` against Paddle 3.3.1's constructor signature (issue 22 item 3).

Runs where Paddle is installed (e.g. `/work/venv-paddle/bin/python -m pytest
tests/breadth/test_paddle_signatures.py`); skipped otherwise. Checked: every Paddle keyword
exists here with the same default, and Paddle's positional parameters come in the same order.
The accepted differences are listed below with their reasons (and in docs/paddle_compat.md);
any other difference fails the test, naming the layer and the parameter.
"""
import inspect

import pytest

import runtime as rt

paddle = pytest.importorskip("paddle", reason="Paddle is not installed in this environment "
                                              "(install paddlepaddle==3.3.1 in a separate venv)")

# (layer, what) -> why it differs
ACCEPTED = {
    ("Dropout", "order"): "Paddle 3.3.1 moved `inplace` to position 2; Paddle 2.x code passes "
                          "`axis` there, and this runtime keeps the 2.x order (`inplace` is "
                          "accepted as a keyword)",
    ("Silu", "order"): "Paddle 3.3.1 takes `inplace` first; `Silu(name)` of Paddle 2.x keeps "
                       "working here (`inplace` is accepted as a keyword)",
}

SKIP = {"Layer", "RNNCellBase"}  # base classes, not layers a model constructs
SKIP.add("SiLU")  # PyTorch's spelling of Silu (the same class); paddle.nn has only Silu


def _layers():
    return sorted(n for n, o in vars(rt.nn).items()
                  if inspect.isclass(o) and issubclass(o, rt.nn.Layer) and n not in SKIP)


def _params(cls):
    return [p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def differences(name: str) -> list:
    ours, theirs = getattr(rt.nn, name), getattr(paddle.nn, name, None)
    if theirs is None:
        return [f"{name}: no paddle.nn.{name}"]
    mine = {p.name: p for p in _params(ours)}
    out = []
    for p in _params(theirs):
        if p.name not in mine:
            out.append(f"{name}: keyword {p.name!r} (default {p.default!r}) is missing")
        elif p.default is not inspect.Parameter.empty and mine[p.name].default != p.default:
            out.append(f"{name}: {p.name} defaults to {mine[p.name].default!r}, Paddle "
                       f"{p.default!r}")
    positional = [p.name for p in _params(theirs) if p.kind == p.POSITIONAL_OR_KEYWORD]
    order = [p.name for p in _params(ours)][:len(positional)]
    if order != positional and (name, "order") not in ACCEPTED:
        out.append(f"{name}: positional order {order}, Paddle {positional}")
    return out


@pytest.mark.parametrize("name", _layers())
def test_layer_signature_matches_paddle(name):
    assert differences(name) == []


def test_paddle_layers_real_models_use_exist_here():
    for name in ("Conv3D", "MaxPool3D", "AvgPool3D", "BatchNorm", "Conv2DTranspose", "GRU",
                 "LSTM", "MultiHeadAttention", "TransformerDecoderLayer", "Embedding"):
        assert hasattr(rt.nn, name), name
