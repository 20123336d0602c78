"""A batch killed with SIGKILL (no chance to end its runs) leaves no process and no scratch folder behind:
its workers notice the batch is gone and end their sessions, the fork server ends with them, and the
next batch removes what a killed one left in the temporary folder."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sear.batch.command import SCRATCH_PREFIX, remove_stale_scratch
from tests.batch.helpers import make_project, write_sweep


def _descendants(pid: int) -> dict[int, str]:
    """Every process below `pid`, by id, with its command line (from every /proc/N/stat's parent: a
    thread's children are not in the main thread's /proc/PID/task/PID/children)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child in [c for c, p in parents.items() if p == parent]:
            with contextlib.suppress(OSError):
                found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                todo.append(child)
    return found


def _running(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a zombie has ended; only its parent's wait is due)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_batch_killed_with_sigkill_leaves_no_worker_fork_server_or_scratch_folder(tmp_path):
    make_project(tmp_path)
    sweep = write_sweep(tmp_path, 'project = "bot.prj"\nduration = 30.0\ntimeout = 600\n'
                                  '[set]\ncode.MODE = "hang"\n')
    # A temporary folder of a short path, as most are: the fork server's socket goes into the batch's
    # scratch folder only while its path stays within the limit of a socket's path.
    tmp = Path(tempfile.mkdtemp(prefix="sb-", dir="/tmp"))
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "sear", "batch", str(sweep), "-j", "1", "--no-report"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120  # functional: catches a batch that never starts its run
        while time.monotonic() < deadline and not any("sear.controller" in c for c in seen.values()):
            time.sleep(0.1)
            seen.update(_descendants(proc.pid))
        # Positive controls: the run is under way (its user code process hangs in main_loop), with the fork
        # server beside it, and the batch's scratch folder is in the temporary folder.
        assert any("sear.controller" in c for c in seen.values()), seen
        assert any("forkserver" in c for c in seen.values()), seen
        assert [p.name for p in tmp.iterdir() if p.name.startswith(SCRATCH_PREFIX)], list(tmp.iterdir())
        proc.kill()
        proc.wait(timeout=60)
        deadline = time.monotonic() + 60  # functional: on main they ran on until their run ended, never here
        while time.monotonic() < deadline and any(_running(pid) for pid in seen):
            time.sleep(0.1)
        left = {pid: cmd for pid, cmd in seen.items() if _running(pid)}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in seen:  # whatever a failing run left: ended here, by id
            if _running(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        litter = sorted(p.name for p in tmp.iterdir())
        shutil.rmtree(tmp, ignore_errors=True)
    assert left == {}
    assert litter == []


def test_the_next_batch_removes_the_scratch_folder_of_a_killed_one_and_keeps_a_living_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{SCRATCH_PREFIX}{dead.pid}-abc"
    living = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    other = tmp_path / "sear-batch-notes"
    for folder in (stale, living, other):
        (folder / "run-0000-x").mkdir(parents=True)
        (folder / "run-0000-x" / "spec.json").write_text("{}")
    remove_stale_scratch()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([living.name, other.name])
