"""Two functions with the same name and body at different places (the `forward` of two
Layers) get their own generated files: the report and errors of each name its own lines (a
shared file and line map named one function's lines for both)."""
import pytest

import d2s
import runtime as rt


class First(rt.nn.Layer):
    def forward(self, x):
        h = x * 2
        if rt.mean(h) > 0:
            h = rt.reshape(h, [3, -1])
        return h


class Second(rt.nn.Layer):
    def forward(self, x):
        h = x * 2
        if rt.mean(h) > 0:
            h = rt.reshape(h, [3, -1])
        return h


def test_each_function_reports_and_fails_at_its_own_lines():
    layers = [d2s.to_static(First()), d2s.to_static(Second())]
    spec = rt.static.InputSpec([None, 4])
    for layer in layers:  # both converted before either is checked
        layer.forward.get_concrete_program(spec)
    for layer in layers:
        line = type(layer).forward.__code__.co_firstlineno
        text = str(layer.forward.report(spec))
        marked = (f"{line + 2:5d} |         if rt.mean(h) > 0:\n"
                  "      |         ^ if: graph op (cond)")
        assert marked in text, text
        with pytest.raises(ValueError) as info:
            layer(rt.ones([2, 4]))
        assert f"line {line + 3}, in forward" in "\n".join(info.value.__notes__)
