"""check_project: every problem at once, as sentences; user code is compiled, never run."""

from __future__ import annotations

import pytest

from sear.project import Project
from sear.validate import check_project


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
