"""Several robots in one project: the file format (today's files unchanged), the robot list's edits and
their refusals, and loading every robot's files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lxml import etree

from sear.errors import ProjectError
from sear.loading import load_project
from sear.project import DUPLICATE_OFFSET, Project, Robot


@pytest.fixture
def demo(tmp_path: Path, demo_dir: Path) -> Path:
    shutil.copytree(demo_dir, tmp_path / "demo")
    return tmp_path / "demo" / "demo.prj"


def test_todays_file_is_one_robot_and_is_written_as_today(demo: Path, tmp_path: Path) -> None:
    project = Project.load(demo)
    robots = project.robots
    assert [r.name for r in robots] == ["robot"]
    assert robots[0].body is project.body and robots[0].dynamics is project.dynamics  # shared, not copied
    project.save()  # today's save spells out every field; a file SEAR wrote is then rewritten unchanged
    before = demo.read_bytes()
    Project.load(demo).save()
    assert demo.read_bytes() == before
    # Written to a fresh file (all fields spelled out): still no trace of the robot list.
    project.save(tmp_path / "fresh.prj")
    tags = {el.tag for el in etree.parse(str(tmp_path / "fresh.prj")).getroot()}
    assert "body" in tags and "robot_name" not in tags and "extra_robots" not in tags


def test_two_robots_round_trip(demo: Path) -> None:
    project = Project.load(demo)
    project.rename_robot(0, "red")
    blue = project.duplicate_robot(0, "blue")
    blue.body.start_east = 3.5
    blue.dynamics.mass = 12.0
    project.save()
    root = etree.parse(str(demo)).getroot()
    assert root.findtext("robot_name") == "red"
    assert [el.get("name") for el in root.find("extra_robots")] == ["blue"]
    again = Project.load(demo)
    assert again == project
    assert [r.name for r in again.robots] == ["red", "blue"]
    second = again.robots[1]
    assert second.body.start_east == 3.5 and second.dynamics.mass == 12.0
    assert second.body.start_north == project.body.start_north + DUPLICATE_OFFSET
    assert again.dynamics.mass == 20.0  # the first robot's own dynamics untouched
    # Paths of the extra robot are stored relative to the project's folder and read back absolute.
    assert root.find("extra_robots/robot/body/file").text == "body.stl"
    assert second.body.file == demo.parent / "body.stl"


def test_duplicate_names_refused_with_file_and_field(demo: Path) -> None:
    project = Project.load(demo)
    project.duplicate_robot(0, "twin")
    with pytest.raises(ProjectError, match="already named 'twin'"):
        project.rename_robot(0, "twin")
    with pytest.raises(ProjectError, match="two robots are named 'twin'"):
        project.add_robot(Robot(name="twin"))
    assert [r.name for r in project.robots] == ["robot", "twin"]  # the refused one was not kept
    project.save()
    text = demo.read_text().replace('<robot name="twin">', '<robot name="robot">')
    demo.write_text(text)
    with pytest.raises(ProjectError) as info:
        Project.load(demo)
    assert "two robots are named 'robot'" in str(info.value) and str(demo) in str(info.value)


def test_bad_robot_name_names_line_and_field(demo: Path) -> None:
    project = Project.load(demo)
    project.duplicate_robot(0, "ok")
    project.save()
    demo.write_text(demo.read_text().replace('name="ok"', 'name="two words"'))
    with pytest.raises(ProjectError) as info:
        Project.load(demo)
    message = str(info.value)
    assert "'two words'" in message and "line" in message and "extra_robots" in message


def test_forty_robots_are_saved_and_read_back(demo: Path) -> None:
    """No cap on the robot count (the collision groups have none: sear.collision)."""
    project = Project.load(demo)
    for i in range(39):
        project.duplicate_robot(0, f"r{i}")
    project.save()
    again = Project.load(demo)
    assert [r.name for r in again.robots] == ["robot", *(f"r{i}" for i in range(39))]
    # Each copy starts DUPLICATE_OFFSET north of the robot copied (the first).
    assert again.robots[39].body.start_north == pytest.approx(project.body.start_north + DUPLICATE_OFFSET)


def test_remove_first_robot_promotes_the_second(demo: Path) -> None:
    project = Project.load(demo)
    second = project.duplicate_robot(0, "second")
    second.dynamics.mass = 7.0
    with pytest.raises(ProjectError):
        Project().remove_robot(0)  # the only robot stays
    project.remove_robot(0)
    assert [r.name for r in project.robots] == ["second"]
    assert project.dynamics.mass == 7.0 and project.body is second.body


def test_every_robots_files_are_loaded_and_checked(demo: Path) -> None:
    project = Project.load(demo)
    other = project.duplicate_robot(0, "other")
    loaded = load_project(project)
    assert loaded.ok, loaded.problems
    assert len(loaded.robots) == 2 and all(robot.code is not None for robot in loaded.robots)
    assert [s.name for s in loaded.robots[1].sensors] == [s.name for s in loaded.robots[0].sensors]
    assert loaded.models is not None and len(loaded.models.robots) == 2
    # A missing file of the extra robot is reported with that robot's field; the first robot's are fine.
    other.body.file = demo.parent / "missing.stl"
    problems = load_project(project).problems
    assert [p.field for p in problems] == ["extra_robots.other.body.file"]
    assert "robot other" in problems[0].label


def _second_robot(demo: Path) -> tuple[Project, Robot]:
    """The demo with a second robot, 'other', whose user code is a copy of its own (so it can be broken
    alone)."""
    project = Project.load(demo)
    other = project.duplicate_robot(0, "other")
    assert other.code.user_code is not None
    own = demo.parent / "other_code.py"
    shutil.copyfile(other.code.user_code, own)
    other.code.user_code = own
    return project, other


def test_a_syntax_error_in_the_second_robots_code_names_that_robot(demo: Path) -> None:
    project, other = _second_robot(demo)
    assert load_project(project).ok  # positive control: both robots' code compiles
    assert other.code.user_code is not None
    other.code.user_code.write_text("def main_loop(sim):\n    x = (1,\n")
    (problem,) = load_project(project).problems
    assert problem.field == "extra_robots.other.code.user_code" and problem.tab == "Code Setup"
    assert problem.file == other.code.user_code and problem.line == 2
    assert str(problem).startswith(f"{other.code.user_code}, line 2: robot other: syntax error in the user code")
    # The first robot's own code, broken the same way, is named as the first robot (the project has two).
    assert project.code.user_code is not None
    project.code.user_code.write_text("def main_loop(sim):\n    x = (1,\n")
    first, second = load_project(project).problems
    assert first.field == "code.user_code" and "robot robot: syntax error" in first.message
    assert second.field == "extra_robots.other.code.user_code" and "robot other: syntax error" in second.message


def test_a_missing_wheel_mesh_of_the_second_robot_names_that_robot(demo: Path) -> None:
    project, other = _second_robot(demo)
    other.wheels["left_rear"].file = demo.parent / "no_such_wheel.ply"
    (problem,) = load_project(project).problems
    assert problem.field == "extra_robots.other.wheels.left_rear.file" and problem.tab == "Wheel Models"
    assert str(problem) == (f"Wheel Models: robot other: left rear wheel file: {demo.parent / 'no_such_wheel.ply'} "
                            "does not exist; choose the file again or restore it.")


def test_a_missing_mesh_in_the_second_robots_urdf_names_that_robot(demo: Path) -> None:
    project, other = _second_robot(demo)
    urdf = demo.parent / "other.urdf"
    urdf.write_text('<robot name="o">\n  <link name="base">\n    <visual><geometry><mesh filename="gone.stl"/>'
                    '</geometry></visual>\n  </link>\n</robot>\n')
    other.body.file = urdf
    (problem,) = load_project(project).problems
    assert problem.field == "extra_robots.other.body.file" and problem.tab == "Robot Body Model"
    assert problem.file == urdf and problem.line == 3 and problem.detail == "link 'base'"
    assert problem.message.startswith("robot other: the mesh 'gone.stl' was not found")
