"""`--log` never overwrites the run's inputs, and replaces an existing log only with --force; the streamed
array format reads back (load_arrays) as written."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

from sear.errors import ProjectError
from sear.project import Project
from sear.runtime.logs import NpyStream, check_log_path, load_arrays, read_npy_rows


def _sear(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, timeout=timeout)


def test_log_path_refuses_every_input_of_the_project(demo_copy, tmp_path):
    project = Project.load(demo_copy / "demo.prj")
    inputs = [demo_copy / "demo.prj", *(c.path for c in project.file_choices().values() if c.path is not None)]
    assert len(inputs) >= 8  # project, terrain, body, four wheels, user code, sensors
    for path in inputs:
        before = path.read_bytes()
        for force in (False, True):
            with pytest.raises(ProjectError, match="would overwrite the project"):
                check_log_path(path, project, force=force)
        assert path.read_bytes() == before
    link = tmp_path / "link.csv"  # another name for the user code is the user code
    link.symlink_to(project.code.user_code)
    with pytest.raises(ProjectError, match="user code file"):
        check_log_path(link, project, force=True)
    with pytest.raises(ProjectError, match="is a folder"):
        check_log_path(demo_copy, project, force=True)
    # positive controls: a new file is fine; an existing log only with force
    assert check_log_path(tmp_path / "new.csv", project) == tmp_path / "new.csv"
    (tmp_path / "old.csv").write_text("time\n")
    with pytest.raises(ProjectError, match=r"exists; .*--force"):
        check_log_path(tmp_path / "old.csv", project)
    assert check_log_path(tmp_path / "old.csv", project, force=True) == tmp_path / "old.csv"
    (tmp_path / "other.arrays").mkdir()  # the array folder of a log counts as the log
    with pytest.raises(ProjectError, match=r"other\.arrays exists"):
        check_log_path(tmp_path / "other.csv", project)


def test_cli_log_over_the_project_or_an_existing_log(demo_copy, tmp_path):
    prj, code = demo_copy / "demo.prj", demo_copy / "demo_code.py"
    before = {p: p.read_bytes() for p in (prj, code)}
    for target in (prj, code):
        result = _sear("run", str(prj), "--headless", "--duration", "0.5", "--log", str(target), "--force")
        assert result.returncode == 1 and "would overwrite the" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert {p: p.read_bytes() for p in before} == before
    log = tmp_path / "run.csv"
    log.write_text("precious\n")
    result = _sear("run", str(prj), "--headless", "--duration", "0.5", "--log", str(log))
    assert result.returncode == 1 and "--force" in result.stderr and log.read_text() == "precious\n"
    result = _sear("run", str(prj), "--headless", "--duration", "0.5", "--log", str(log), "--force")
    assert result.returncode == 0, result.stderr
    with open(log, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "time" and len(rows) == 1 + 30  # 60 Hz for 0.5 s
    assert len(load_arrays(log)["lidar.time"]) == 6  # 0, 0.1 .. 0.5 s


def test_npy_stream_reads_back_at_every_stage(tmp_path):
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(7, 3, 5)).astype(np.float32)
    stream = NpyStream(tmp_path / "a.npy", rows[0])
    assert np.load(tmp_path / "a.npy").shape == (0, 3, 5)
    for i, row in enumerate(rows):
        stream.append(row)
        if i == 2:
            stream.flush()  # np.load sees what was flushed; read_npy_rows whatever reached the file
            assert np.array_equal(np.load(tmp_path / "a.npy"), rows[:3])
    stream._file.flush()  # the rows, but not the header's count: as a kill between two flushes leaves it
    assert np.load(tmp_path / "a.npy").shape == (3, 3, 5)
    assert np.array_equal(read_npy_rows(tmp_path / "a.npy"), rows)
    with open(tmp_path / "a.npy", "ab") as fh:  # half a row more: a kill in the middle of a write
        fh.write(rows[0].tobytes()[:17])
    assert np.array_equal(read_npy_rows(tmp_path / "a.npy"), rows)
    stream.close()
    other = NpyStream(tmp_path / "b.npy", rows[0])
    with pytest.raises(ValueError, match="shape"):
        other.append(rows[0][:2])
    other.close()


def test_load_arrays_cuts_a_sensors_keys_to_common_rows(tmp_path):
    folder = tmp_path / "run.arrays"
    folder.mkdir()
    times, scans = NpyStream(folder / "lidar.time.npy", np.float64(0)), NpyStream(folder / "lidar.ranges.npy",
                                                                                  np.zeros(4, np.float32))
    for i in range(5):
        times.append(np.float64(i / 10))
        if i < 4:
            scans.append(np.full(4, i, np.float32))
    times.close()
    scans.close()
    got = load_arrays(tmp_path / "run.csv")
    assert sorted(got) == ["lidar.ranges", "lidar.time"]
    assert got["lidar.time"].tolist() == [0.0, 0.1, 0.2, 0.3] and got["lidar.ranges"][:, 0].tolist() == [0, 1, 2, 3]
    assert got["lidar.time"].dtype == np.float64 and got["lidar.ranges"].dtype == np.float32
    assert load_arrays(tmp_path / "none.csv") == {}
