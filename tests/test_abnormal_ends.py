"""Logs survive abnormal ends: runs killed (SIGKILL), terminated (SIGTERM), interrupted (SIGINT) at random
moments (seeded), and user code that crashes its process (a segfault through ctypes, os._exit), which
ends a headless run at that tick. Each log must read back whole up to the end, and be the start of the
same run's complete log (runs are deterministic), so what was kept is also right."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sear.project import Project
from sear.runtime.logs import load_arrays

PROBE = textwrap.dedent("""\
    import ctypes, os
    CRASH_AT = float(os.environ.get("PROBE_CRASH_AT", "inf"))
    HOW = os.environ.get("PROBE_CRASH", "")

    def main_loop(sim):
        sim.accelerate(20.0)
        sim.steer(0.2)
        print(f"t={sim.time:.6f}", flush=True)
        if sim.time >= CRASH_AT:
            if HOW == "segv":
                ctypes.string_at(0)
            os._exit(7)
    """)
CONTROL_DT = 1 / 60  # the demo's control period, s
LIDAR_DT = 0.1  # the demo LIDAR's period, s
REFERENCE_S = 8.0


@pytest.fixture(scope="module")
def probe(tmp_path_factory, demo_dir) -> Path:
    """The demo project driven by the probe code (it prints the simulated time every control tick)."""
    import shutil

    folder = tmp_path_factory.mktemp("probe")
    shutil.copytree(demo_dir, folder / "demo")
    project = Project.load(folder / "demo" / "demo.prj")
    (folder / "demo" / "probe.py").write_text(PROBE)
    project.code.user_code = folder / "demo" / "probe.py"
    project.save(folder / "demo" / "probe.prj")
    return folder / "demo" / "probe.prj"


def _start(prj: Path, log: Path, duration: float = 600.0, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sear", "run", str(prj), "--headless", "--duration",
                             str(duration), "--seed", "2", "--log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})


def _run(prj: Path, log: Path, *, kill_at: float | None = None, sig: int = signal.SIGKILL,
         duration: float = 600.0, **env: str) -> tuple[int, float, str, str]:
    """Run the probe; with `kill_at`, send `sig` once it printed a simulated time past that. Returns the
    exit status, the last simulated time it printed before the signal, its stdout and its stderr."""
    proc = _start(prj, log, duration, **env)
    seen = 0.0
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("t="):
                seen = float(line[2:])
                if kill_at is not None and seen >= kill_at:
                    proc.send_signal(sig)
                    break
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, seen, out, err


def _rows(log: Path) -> tuple[list[str], bool]:
    """The log's whole lines (header first), and whether the file ends with a whole line."""
    data = log.read_bytes().decode()
    lines = data.split("\r\n")
    return lines[:-1], lines[-1] == ""


@pytest.fixture(scope="module")
def reference(probe, tmp_path_factory) -> tuple[list[str], dict[str, np.ndarray]]:
    log = tmp_path_factory.mktemp("reference") / "ref.csv"
    status, _seen, _out, err = _run(probe, log, duration=REFERENCE_S)
    assert status == 0, err
    rows, whole = _rows(log)
    assert whole and len(rows) == 1 + round(REFERENCE_S / CONTROL_DT)
    return rows, load_arrays(log)


def _check_prefix(log: Path, reference, *, complete: bool) -> tuple[float, float]:
    """The log is the start of the reference log, row for row and scan for scan; complete: its files end
    whole (the CSV with a whole row, every .npy header counting every row). Returns the times of its
    last row and its last scan."""
    ref_rows, ref_arrays = reference
    rows, whole = _rows(log)
    if complete:
        assert whole
    assert len(rows) >= 2 and rows == ref_rows[:len(rows)]  # at least the header and a row
    arrays = load_arrays(log)
    assert sorted(arrays) == ["lidar.ranges", "lidar.time"]
    scans = len(arrays["lidar.time"])
    assert scans >= 1 and len(arrays["lidar.ranges"]) == scans
    for key, values in arrays.items():
        assert np.array_equal(values, ref_arrays[key][:scans], equal_nan=True), key
        if complete:  # the header was fixed up: np.load reads the same
            assert np.array_equal(np.load(log.with_suffix(".arrays") / f"{key}.npy"), values, equal_nan=True)
    return float(rows[-1].split(",")[0]), float(arrays["lidar.time"][-1])


def _cases(seed: int, kills: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(seed)
    return [("kill", float(rng.uniform(0.3, 3.0))) for _ in range(kills)]


def _check_killed(probe, reference, tmp_path, cases) -> None:
    def one(i_case):
        i, (kind, at) = i_case
        log = tmp_path / f"run{i}.csv"
        sig = {"kill": signal.SIGKILL, "term": signal.SIGTERM, "int": signal.SIGINT}[kind]
        return kind, at, log, _run(probe, log, kill_at=at, sig=sig)

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(one, enumerate(cases)))
    for kind, at, log, (status, seen, out, err) in results:
        assert seen >= at, (kind, at, err)
        if kind == "kill":
            assert status == -signal.SIGKILL
            last_row, last_scan = _check_prefix(log, reference, complete=False)
        else:
            assert status == (143 if kind == "term" else 130), (kind, err)
            assert ("terminated" if kind == "term" else "interrupted") in err and "Traceback" not in err
            assert "simulated" in out  # the summary
            last_row, last_scan = _check_prefix(log, reference, complete=True)
        # Everything before the user code's turn in which it printed `seen` was on disk.
        assert last_row >= seen - CONTROL_DT - 1e-6, (kind, at, seen, last_row)
        assert last_scan >= seen - LIDAR_DT - 1e-6, (kind, at, seen, last_scan)


def test_killed_terminated_and_interrupted_runs_keep_their_logs(probe, reference, tmp_path):
    cases = [*_cases(seed=12, kills=2), ("term", 1.3), ("int", 2.2)]
    _check_killed(probe, reference, tmp_path, cases)


@pytest.mark.slow
def test_many_runs_killed_at_random_moments(probe, reference, tmp_path):
    _check_killed(probe, reference, tmp_path, [*_cases(seed=99, kills=12), ("term", 0.4), ("int", 0.9)])


@pytest.mark.parametrize("how", ["segv", "exit"])
def test_a_crash_of_user_code_keeps_the_log_to_the_crash(probe, reference, tmp_path, how):
    """The user code runs in a process of its own (issue 14): its crash is contained, reported with what
    happened, and the headless run ends there with exit status 1 and its files closed whole."""
    log = tmp_path / "crash.csv"
    status, seen, _out, err = _run(probe, log, PROBE_CRASH_AT="2.005", PROBE_CRASH=how)
    assert status == 1, err
    if how == "segv":
        assert "killed by SIGSEGV" in err and "probe.py, line 11" in err and "ctypes.string_at(0)" in err
    else:
        assert "exit status 7" in err
    assert "ended with an error in the user code" in err and "sear/" not in err  # no internal frame
    crash = round(2.005 / CONTROL_DT + 0.5) * CONTROL_DT  # the first control tick at or after 2.005 s
    assert seen == pytest.approx(crash, abs=1e-6)
    last_row, last_scan = _check_prefix(log, reference, complete=True)
    assert last_row == pytest.approx(crash, abs=1e-6)  # every row up to the failing tick, the end of the run
    assert last_scan == pytest.approx(2.0, abs=1e-6)  # and the scan taken at 2.0 s


def _open_files(pid: int) -> list[str]:
    """What the process `pid` and its descendants hold open (the targets of their descriptors)."""
    held, todo = [], [pid]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):
            held += [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        with contextlib.suppress(OSError):
            todo += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return held


def test_a_killed_run_leaves_nothing_in_the_temporary_folder(probe, tmp_path):
    """SIGKILL gives a run no chance to clean up: whatever it keeps in the temporary folder (the user code
    process's stack dump) must have no name there, or every killed run leaves a file behind."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start(probe, tmp_path / "killed.csv", TMPDIR=str(tmp))
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("t=") and float(line[2:]) > 0.5:
                break
        # Positive control: the run does keep a file in this temporary folder while it runs.
        assert any(target.startswith(str(tmp)) for target in _open_files(proc.pid))
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert sorted(p.name for p in tmp.iterdir()) == []


def test_user_code_closing_stdout_still_gets_a_summary(demo_copy, tmp_path):
    project = Project.load(demo_copy / "demo.prj")
    code = demo_copy / "closer.py"
    code.write_text("import sys\n\ndef init(sim):\n    sys.stdout.close()\n    sys.stderr.close()\n\n"
                    "def main_loop(sim):\n    if sim.time > 0.5:\n        print('still here')\n"
                    "        raise RuntimeError('bad')\n")
    project.code.user_code = code
    project.save(demo_copy / "closer.prj")
    result = subprocess.run([sys.executable, "-m", "sear", "run", str(demo_copy / "closer.prj"), "--headless",
                             "--duration", "1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1  # the user code's error, reported
    # Reported on standard error (the user's own traceback), the console output on standard output: the
    # user code runs in a process of its own, whose closed streams are not the simulation's.
    assert "Traceback (most recent call last)" in result.stderr
    assert "closer.py" in result.stderr and "RuntimeError: bad" in result.stderr
    assert "sear/" not in result.stdout + result.stderr  # no internal frame anywhere
    # The run ends at the failing control tick, the first after 0.5 s (31/60 s), with its summary.
    assert "still here" in result.stdout and f"sear: simulated {31 / 60:.2f} s" in result.stdout
    assert "ended with an error in the user code" in result.stderr
