"""Issue 25's reproductions of bad input, run as the user runs them (`sear validate`, `sear run`, `sear
batch` in a process of their own): each ends with exit status 1 and a message naming the file and what
to do, no traceback, and leaves no file in the temporary folder and no process behind (every process
the command started carries a marker in its environment, looked for in /proc afterwards)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from sear.project import Project
from sear.starter import create_new_project
from tests.models.bigurdf import big_urdf

MARK = "SEAR_HOSTILE_TEST"


def _marked_processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if f"{MARK}={mark}".encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture
def sear(tmp_path):
    """Run `sear ARGS` with its own temporary folder; afterwards that folder is empty and none of its
    processes is left."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    mark = uuid.uuid4().hex

    def run(*args: str) -> str:
        env = {**os.environ, "TMPDIR": str(tmp), MARK: mark}
        done = subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, env=env,
                              timeout=300)
        said = done.stdout + done.stderr
        assert done.returncode == 1, said
        assert "Traceback" not in said and "Error:" not in said.replace("SweepError", ""), said
        return said

    yield run
    assert sorted(p.name for p in tmp.iterdir()) == []
    assert _marked_processes(mark) == []


def _project(folder: Path) -> Path:
    prj = folder / "p.prj"
    create_new_project(prj)
    return prj


def test_a_ten_thousand_link_urdf(sear, tmp_path):
    prj = _project(tmp_path)
    (tmp_path / "big.urdf").write_text(big_urdf(10_000))
    project = Project.load(prj)
    project.body.file = tmp_path / "big.urdf"
    project.save(prj)
    for command in ("validate", "run"):
        said = sear(command, str(prj), *(["--headless", "--duration", "0.1"] if command == "run" else []))
        assert "big.urdf, line" in said and "10,000 links" in said and "at most 1,000" in said


def test_a_path_field_of_300_characters(sear, tmp_path):
    prj = _project(tmp_path)
    text = prj.read_text().replace("<file>body.obj</file>", f"<file>{'y' * 300}.obj</file>")
    assert text != prj.read_text()
    prj.write_text(text)
    for command in ("validate", "run"):
        said = sear(command, str(prj), *(["--headless", "--duration", "0.1"] if command == "run" else []))
        assert "304 bytes long" in said and "at most 255 bytes" in said


@pytest.mark.parametrize(("body", "words"), [
    ("duration = 1e300\n", ["line 2, field 'duration'", "at most 1e+06"]),
    ('duration = 1.0\n[vary]\ndynamics.mass = {min = 1, max = 100, steps = 1000000}\n',
     ["line 4, field 'vary.dynamics.mass'", "1,000,000 runs", "--yes"]),
    ('duration = 1.0\nseeds = "1..1000000"\n', ["line 3, field 'seeds'", "1,000,000 runs", "--yes"]),
])
def test_sweep_files_with_huge_numbers(sear, tmp_path, body, words):
    _project(tmp_path)
    sweep = tmp_path / "s.toml"
    sweep.write_text('project = "p.prj"\n' + body)
    said = sear("batch", str(sweep))
    for word in words:
        assert word in said, said
    assert not (tmp_path / "s-results").exists()


def test_the_process_marker_finds_a_marked_process():
    """The positive control of the fixture's check for processes left behind."""
    mark = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ, MARK: mark})
    try:
        assert _marked_processes(mark) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert _marked_processes(mark) == []
