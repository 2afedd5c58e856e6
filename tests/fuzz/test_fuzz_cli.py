"""`python -m tests.fuzz --native sync` runs a campaign with the generated C code used from
each program's first call (by default a new program's exact C is still building while it
runs, so a campaign would never reach it)."""
import os

from tests.fuzz.__main__ import main


def test_native_sync_campaign_sets_the_setting_and_agrees(monkeypatch, capsys):
    monkeypatch.setenv("D2S_NATIVE", "1")  # (restored after the test)
    assert main(["--gen", "state-same-shape", "--examples", "3", "--seed", "1",
                 "--native", "sync"]) == 0
    assert os.environ["D2S_NATIVE"] == "sync"
    out = capsys.readouterr().out
    assert "[state-same-shape] examples 3" in out and "disagreements 0" in out


def test_control_generator_is_reached_by_gen_and_all(capsys):
    """`--gen control` runs `gen_control`'s programs with its own comparison (input
    gradients too); `all` includes it."""
    from tests.fuzz import GENERATORS
    assert "control" in GENERATORS
    assert main(["--gen", "control", "--examples", "3", "--seed", "2"]) == 0
    assert "[control] examples 3" in capsys.readouterr().out
