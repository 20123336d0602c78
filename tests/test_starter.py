"""File > New makes a project that simulates at once (issue 13 item 11): flat ground, a box body on four
cylinder wheels, the template user code and a sensors file, written beside the new .prj."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest
import trimesh

from sear.errors import ProjectError
from sear.loading import load_project
from sear.project import Project
from sear.resources import packaged
from sear.starter import STARTER_FILES, create_new_project


def test_a_new_project_validates_and_simulates_with_no_problems(tmp_path):
    project = create_new_project(tmp_path / "rover" / "rover.prj")
    assert project.path == tmp_path / "rover" / "rover.prj"
    loaded = load_project(Project.load(project.path))
    assert loaded.problems == []
    assert [s.name for s in loaded.robots[0].sensors] == ["front_sonar", "gps", "compass"]
    validate = subprocess.run([sys.executable, "-m", "sear", "validate", str(project.path)], capture_output=True,
                              text=True, timeout=120)
    assert validate.returncode == 0 and "OK" in validate.stdout, validate.stderr
    log = tmp_path / "run.csv"
    run = subprocess.run([sys.executable, "-m", "sear", "run", str(project.path), "--headless", "--duration", "6",
                          "--log", str(log)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    with log.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 * 60
    # The template code drives the robot forward (east, +x) at up to 1 m/s: it is well on its way, upright,
    # resting on its wheels above the flat ground (axles 8 cm below the body's centre, wheels 10 cm).
    last = rows[-1]
    assert 2.0 < float(last["truth.x"]) < 6.5
    assert abs(float(last["truth.y"])) < 0.2
    assert abs(float(last["truth.z"]) - (0.08 + 0.1)) < 0.08
    assert abs(float(last["truth.roll"])) < 0.1 and abs(float(last["truth.pitch"])) < 0.1


def test_the_new_projects_files_are_what_they_say(tmp_path):
    project = create_new_project(tmp_path / "p.prj")
    ground = trimesh.load(project.terrain.file, force="mesh")
    assert np.allclose(ground.vertices[:, 2], 0.0)
    assert np.allclose(ground.bounds, [[-50, -50, 0], [50, 50, 0]])
    body = trimesh.load(project.body.file, force="mesh")
    assert np.allclose(body.extents, (0.6, 0.4, 0.15)) and body.is_watertight
    wheel = trimesh.load(project.wheels["left_front"].file, force="mesh")
    assert np.allclose(wheel.extents, (0.2, 0.06, 0.2), atol=1e-3)  # radius 0.1, axle along y
    assert {w.file for w in project.wheels.values()} == {tmp_path / "wheel.obj"}
    positions = [w.position for w in project.wheels.values()]
    assert sorted(p[1] for p in positions if p) == [-0.25, -0.25, 0.25, 0.25]
    assert project.code.user_code is not None
    assert project.code.user_code.read_bytes() == packaged("templates", "user_code.py").read_bytes()
    assert project.code.sensors is not None and "<!--" in project.code.sensors.read_text()
    # Stored relative, so the folder can be moved.
    assert "<file>terrain.obj</file>" in project.path.read_text()


def test_a_new_project_never_overwrites_a_file(tmp_path):
    (tmp_path / "user_code.py").write_text("# mine\n")
    with pytest.raises(ProjectError, match=r"user_code\.py"):
        create_new_project(tmp_path / "p.prj")
    assert (tmp_path / "user_code.py").read_text() == "# mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["user_code.py"]  # nothing else written
    # Positive control: beside another name it works.
    create_new_project(tmp_path / "other" / "p.prj")
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == sorted([*STARTER_FILES.names(), "p.prj"])


def test_a_new_project_where_no_folder_can_be_made_is_a_project_error(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(ProjectError, match="cannot be written"):
        create_new_project(a_file / "p.prj")  # its "folder" is a file
    assert a_file.read_text() == "x"
