"""runtime/progress.py: a bar redrawn in place on a terminal, plain lines elsewhere."""
import io
import re

import numpy as np

from runtime.progress import ProgressBar, format_value


def test_plain_lines_every_n_steps_and_the_last():
    out = io.StringIO()
    bar = ProgressBar(total=5, file=out, every=2)
    assert not bar.tty  # a StringIO is no terminal
    for i in range(1, 6):
        bar.update(i, [("loss", 1.0 / i), ("acc", [0.5])])
    lines = out.getvalue().splitlines()
    assert [line.split(" - ")[0] for line in lines] == ["step 2/5", "step 4/5", "step 5/5"]
    assert "\r" not in out.getvalue()
    assert lines[-1].split(" - ")[1:3] == ["loss: 0.2000", "acc: 0.5000"]
    assert re.search(r" - \d+(us|ms)/step$", lines[-1])
    bar.finish(5)  # printed already: nothing more
    assert out.getvalue().splitlines() == lines


def test_terminal_bar_redraws_one_line_and_ends_it():
    out = io.StringIO()
    bar = ProgressBar(total=4, file=out, tty=True, width=8)
    for i in range(1, 5):
        bar.update(i, [("loss", 0.25)])
    text = out.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1
    frames = [f for f in text.split("\r") if f]
    assert frames[0].startswith("step 1/4 [=>......]")
    assert frames[-1].startswith("step 4/4 [========]")


def test_unknown_length_and_silence():
    out = io.StringIO()
    bar = ProgressBar(total=None, file=out, tty=True)
    bar.update(3)
    bar.finish(3)
    assert out.getvalue().startswith("\rstep 3 - ") and out.getvalue().endswith("\n")
    plain = io.StringIO()
    stopped = ProgressBar(total=10, file=plain, every=4)
    stopped.update(1)
    stopped.finish(1, [("loss", 2.0)])  # stopped early: the last step is still reported
    assert plain.getvalue().startswith("step 1/10 - loss: 2.0000")
    quiet = io.StringIO()
    silent = ProgressBar(total=2, file=quiet, verbose=0)
    silent.update(2)
    silent.finish(2)
    assert quiet.getvalue() == ""


def test_format_value():
    assert format_value(0.123456) == "0.1235"
    assert format_value([1.5, 2]) == "1.5000, 2"
    assert format_value(1e-7) == "1.0000e-07"
    assert format_value("x") == "x"
    assert format_value(np.float32(0.5)) == "0.5000" and format_value(np.int64(3)) == "3"
