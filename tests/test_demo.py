"""`d2s demo` end to end: LeNet on the bundled digits, eager then static training, save, and a
reload in a fresh process that must predict the same."""
import re

import pytest

pytest.importorskip("sklearn")

from d2s import demo


@pytest.mark.slow  # about 15 s: trains LeNet eagerly and converted
def test_demo_end_to_end(tmp_path, capsys):
    rc = demo.main(out_dir=str(tmp_path))
    out = capsys.readouterr().out
    assert rc == 0, out
    # The converted code is shown and has the config branch as a d2s ifelse.
    assert "def forward(self, x" in out and "_d2s.ifelse(_d2s.eq_(self.image_size, 28)" in out
    accuracies = [float(a) / 100 for a in re.findall(r"accuracy[^\d]*([\d.]+)%", out)]
    eager_acc, static_acc, reloaded_acc = accuracies
    assert eager_acc > 0.6 and static_acc > 0.85, out  # static training kept learning
    assert reloaded_acc == static_acc
    assert "reloaded predictions match" in out
    gap = float(re.search(r"max \|static - eager\| = (\S+)", out).group(1))
    assert gap < 1e-5
    assert re.search(r"eager [\d.]+ ms, static [\d.]+ ms", out)
    # One program for training and one for evaluation: no retracing per step.
    assert "programs traced: 2" in out
    assert any(p.name.startswith("lenet_digits") for p in tmp_path.iterdir())


def test_digits_split_is_disjoint_and_normalised():
    x_train, y_train, x_test, y_test = demo.load_digits_split()
    assert x_train.shape[1:] == (1, 8, 8) and x_train.dtype == "float32"
    assert 0.0 <= x_train.min() and x_train.max() <= 1.0
    assert len(y_train) + len(y_test) == 1797 and abs(len(y_test) - 359) <= 1
    train_rows = {r.tobytes() for r in x_train}
    # Some digits images are exact duplicates, so a few overlaps are data, not a leak.
    assert sum(r.tobytes() in train_rows for r in x_test) < 10
