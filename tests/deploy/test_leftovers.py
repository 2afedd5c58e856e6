"""A process killed with SIGKILL leaves its folder of converted code (`d2s_PID_*` in /dev/shm,
else the temporary folder) behind; the next process that converts a function removes the
folders of this user's processes that are no longer running, and no other."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from d2s.pyct import loader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONVERT = textwrap.dedent("""
    import os, signal, sys
    import runtime as rt, d2s
    from d2s.pyct import loader
    from tests.deploy import fork_work
    d2s.to_static(fork_work.shared)(rt.ones([2]))
    print(loader._directory(), flush=True)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
""")


def _convert_in_a_process(how: str) -> str:
    ran = subprocess.run([sys.executable, "-c", CONVERT, how], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": ROOT},
                         check=False)
    return ran.stdout.strip()


def test_the_folder_of_a_killed_process_is_removed_by_the_next_one():
    killed = _convert_in_a_process("kill")
    assert os.path.basename(killed).startswith("d2s_") and os.path.isdir(killed)
    assert os.listdir(killed)  # the converted code it wrote
    finished = _convert_in_a_process("exit")
    assert not os.path.exists(killed)  # removed by the next process's start-up
    assert not os.path.exists(finished)  # removed by its own exit handler


def test_only_folders_of_processes_that_are_gone_are_removed(tmp_path):
    mine = tmp_path / f"d2s_{os.getpid()}_a"  # this (running) process
    parent = tmp_path / f"d2s_{os.getppid()}_b"  # a running process
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dead = tmp_path / f"d2s_{gone}_c"
    other = tmp_path / "d2s_nopid"  # not named by a process: not ours to judge
    for folder in (mine, parent, dead, other):
        folder.mkdir()
        (folder / "f.py").write_text("x = 1\n")
    assert loader.remove_stale(str(tmp_path)) == [str(dead)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (mine, parent, other))
