"""load_project/check_project: every problem at once, as sentences naming file and tab; user code is
compiled, never run; models are read as a run reads them, and only once for a run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sear.loading import check_project, load_project
from sear.project import Project


@pytest.fixture
def demo(demo_copy):
    return Project.load(demo_copy / "demo.prj")


def test_the_demo_has_no_problems(demo):
    assert check_project(demo) == []


def test_every_problem_is_reported_not_just_the_first(demo):
    folder = demo.path.parent
    (folder / "terrain.obj").unlink()
    (folder / "body.txt").write_text("not a mesh")
    demo.body.file = folder / "body.txt"
    demo.wheels["left_front"].file = folder                    # a folder
    demo.wheels["right_rear"].file = None                       # never chosen
    (folder / "demo_code.py").write_text("def main_loop(sim):\n    x = (1,\n\n")
    (folder / "sensors.xml").write_text('<?xml version="1.0"?>\n<sear-sensors version="1"><gps name="g">')
    problems = check_project(demo)
    assert len(problems) == 6, problems
    text = "\n".join(problems)
    assert "Terrain Model: terrain file" in text and "terrain.obj does not exist" in text
    assert "body.txt is not a supported type" in text and ".stl" in text
    assert "left front wheel file" in text and "is a folder" in text
    assert "right rear wheel file: no file chosen" in text
    assert f"{folder / 'demo_code.py'}, line 2: syntax error" in text
    assert "sensors.xml" in text and "truncated" in text


def test_user_code_is_compiled_not_run(demo, tmp_path):
    marker = tmp_path / "ran"
    code = demo.code.user_code
    code.write_text(f"open({str(marker)!r}, 'w').close()\n\ndef main_loop(sim):\n    pass\n")
    assert check_project(demo) == []
    assert not marker.exists()


@pytest.mark.parametrize(("source", "words"), [
    ("def init(sim):\n    pass\n", "defines neither main_loop(sim) nor run(sim)"),
    ("def main_loop(sim):\n    pass\n\n\ndef run(sim):\n    pass\n", "line 5: the user code defines both"),
])
def test_hooks_are_checked_as_the_loader_would(demo, source, words):
    demo.code.user_code.write_text(source)
    (problem,) = check_project(demo)
    assert words in problem


@pytest.mark.parametrize("source", [
    "from helpers import *\n",                                  # may bring the hook in
    "import robot_lib\nmain_loop = robot_lib.main_loop\n",      # bound without def
    "from robot_lib import run\n",
])
def test_hooks_bound_without_def_are_accepted(demo, source):
    demo.code.user_code.write_text(source)
    assert check_project(demo) == []


# --- models are opened the way a run opens them ----------------------------------------------------

def _binary_stl_of_two_triangles() -> bytes:
    """A whole binary STL written by hand: 80-byte header, count, then 50 bytes a triangle."""
    import struct

    triangles = [((0, 0, 1), (0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 1), (1, 0, 0), (1, 1, 0), (0, 1, 0))]
    body = b"".join(struct.pack("<12fH", *[c for v in t for c in v], 0) for t in triangles)
    return b"\0" * 80 + struct.pack("<I", len(triangles)) + body


_PLY_HEAD = ("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n")

BROKEN_MODELS = {
    # name: (file the demo refers to, damaged content, printed prefix, words of the message)
    "empty STL": ("body.stl", b"", "Robot Body Model: body file", "empty (0 bytes)"),
    "STL cut off mid-triangle": ("body.stl", _binary_stl_of_two_triangles()[:84 + 50 + 20],
                                 "Robot Body Model: body file", "header promises 2 triangles"),
    "OBJ face to vertex 99 of 3": ("wheel_lf.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99\n",
                                   "Wheel Models: left front wheel file", "could not be read as .obj"),
    "PLY face to a missing vertex": ("wheel_rr.ply", (_PLY_HEAD + "3 0 1 7\n").encode(),
                                     "Wheel Models: right rear wheel file", "refers to vertex 7"),
    "DAE that is not XML": ("wheel_lr.dae", b"this is not XML <<<", "Wheel Models: left rear wheel file",
                            "could not be read as .dae"),
}


def _break(folder, case: str):
    name, content, prefix, words = BROKEN_MODELS[case]
    (folder / name).write_bytes(content)
    if name == "wheel_lr.dae":  # the demo has no DAE: point the left rear wheel at one
        prj = folder / "demo.prj"
        prj.write_text(prj.read_text().replace("wheel_lr.ply", "wheel_lr.dae"))
    return folder / name, prefix, words


def test_the_controls_of_the_broken_models_are_whole(tmp_path, demo_dir):
    # The damage is what the tests below catch: the same files whole load (a hand-made STL and PLY).
    from sear.models.meshfiles import load_mesh

    (tmp_path / "whole.stl").write_bytes(_binary_stl_of_two_triangles())
    (tmp_path / "whole.ply").write_text(_PLY_HEAD + "3 0 1 2\n")
    assert len(load_mesh(tmp_path / "whole.stl").faces) == 2
    assert len(load_mesh(tmp_path / "whole.ply").faces) == 1


@pytest.mark.parametrize("case", list(BROKEN_MODELS))
def test_damaged_models_are_problems_naming_file_and_tab(demo, case):
    path, prefix, words = _break(demo.path.parent, case)
    loaded = load_project(demo.path)
    (problem,) = loaded.problems
    assert str(problem).startswith(f"{prefix}: {path}: ") and words in str(problem)
    assert problem.file == path and problem.tab == prefix.split(":")[0]
    assert problem.field is not None and problem.field.endswith(".file")
    assert loaded.models is None and not loaded.ok


@pytest.mark.parametrize("case", list(BROKEN_MODELS))
def test_validate_and_run_refuse_damaged_models_with_the_same_message(demo, case):
    path, prefix, words = _break(demo.path.parent, case)
    checked = _sear("validate", str(demo.path))
    assert checked.returncode == 1 and "OK" not in checked.stdout
    assert "Traceback" not in checked.stderr
    (line,) = [x for x in checked.stderr.splitlines() if x.startswith("  - ")]
    assert line.startswith(f"  - {prefix}: {path}: ") and words in line
    run = _sear("run", str(demo.path), "--headless", "--duration", "1")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert line in run.stderr.splitlines() and "simulated" not in run.stdout


def _sear(*args):
    return subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, timeout=120)


# --- one load for a run -----------------------------------------------------------------------------

def _spy_everywhere(monkeypatch, function) -> list:
    """Replace `function` in every module that holds it, recording each call's first argument."""
    calls: list = []

    def spy(*args, **kwargs):
        calls.append(args[0])
        return function(*args, **kwargs)

    for module in list(sys.modules.values()):
        for name, value in list(vars(module).items()) if module is not None else []:
            if value is function:
                monkeypatch.setattr(module, name, spy)
    return calls


def test_one_run_parses_the_sensors_file_once_and_reads_each_model_once(demo, monkeypatch, tmp_path, capsys):
    import sear.models.meshfiles
    import sear.runtime.simulation
    import sear.sensors.files
    from sear import cli
    from sear.usercode import UserCodeRunner

    monkeypatch.setattr(UserCodeRunner, "_compile", lambda self: pytest.fail("the user code was compiled twice"))
    parsed = _spy_everywhere(monkeypatch, sear.sensors.files.load_sensors)
    meshes = _spy_everywhere(monkeypatch, sear.models.meshfiles.load_mesh)
    terrains = _spy_everywhere(monkeypatch, sear.models.meshfiles.load_terrain)
    status = cli.main(["run", str(demo.path), "--headless", "--duration", "0.5", "--log", str(tmp_path / "a.csv")])
    assert status == 0, capsys.readouterr().err
    folder = demo.path.parent
    assert parsed == [folder / "sensors.xml"]
    assert len(terrains) == 1
    expected = ["terrain.obj", "body.stl", "wheel_lf.obj", "wheel_rf.obj", "wheel_lr.ply", "wheel_rr.ply"]
    assert sorted(Path(p).name for p in meshes) == sorted(expected)


def test_a_simulation_of_a_bare_project_still_loads_what_it_needs(demo, monkeypatch):
    # The positive control of the count above: without a Loaded, Simulation reads the files itself.
    import sear.sensors.files
    from sear.runtime.simulation import Simulation

    parsed = _spy_everywhere(monkeypatch, sear.sensors.files.load_sensors)
    simulation = Simulation(demo, seed=1)
    try:
        simulation.run(0.1)
    finally:
        simulation.close()
    assert parsed == [demo.path.parent / "sensors.xml"]


def test_a_problem_from_an_error_prints_as_the_error_and_knows_its_tab(tmp_path):
    from sear.errors import Problem, ProjectError

    error = ProjectError("must be greater than 0.", file=tmp_path / "a.prj", line=7, field="dynamics.mass")
    problem = Problem.from_error(error)
    assert str(problem) == f"{tmp_path / 'a.prj'}, line 7, field 'dynamics.mass': must be greater than 0."
    assert (problem.field, problem.tab, problem.line) == ("dynamics.mass", "Vehicle Dynamics", 7)
    sensors = Problem.from_error(ProjectError("bad.", file=tmp_path / "s.xml", line=3, field="gps.rate_hz"),
                                 field="code.sensors", tab="Code Setup")
    assert str(sensors) == f"{tmp_path / 's.xml'}, line 3, field 'gps.rate_hz': bad."
    assert (sensors.field, sensors.tab, sensors.detail) == ("code.sensors", "Code Setup", "gps.rate_hz")
