"""The project's <world> section (sear.scene): every obstacle kind saved and read back, bad entries refused
with file, line and field, old files unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest
from lxml import etree

from sear.errors import ProjectError
from sear.project import Project
from sear.scene import Box, Scene, Shelf, Table, Tree, Wall

from .physics.helpers import rover_project

EVERY_KIND = Scene(
    boxes=[Box(name="crate", x=3.0, y=1.5, yaw=0.4, size=0.5, mass=2.5),
           Box(name="pillar", x=-2.0, y=0.0, z=1.2, fixed=True, size=0.3)],
    walls=[Wall(name="north", x=0.0, y=6.0, yaw=0.0, length=8.0, height=1.2, thickness=0.15),
           Wall(name="loose", x=4.0, y=-3.0, yaw=-1.0, fixed=False, mass=20.0)],
    tables=[Table(name="desk", x=-3.0, y=-2.0, yaw=0.25, width=1.4, depth=0.7, height=0.72)],
    trees=[Tree(name="oak", x=10.0, y=-4.0)],
    shelves=[Shelf(name="rack", x=2.0, y=-5.0, yaw=1.5, width=0.9, depth=0.35, height=1.6, levels=4,
                   fixed=False, mass=12.0)],
)


def test_every_obstacle_kind_is_saved_and_read_back(tmp_path):
    project = rover_project(tmp_path)
    project.world = EVERY_KIND
    path = project.save(tmp_path / "room.prj")
    again = Project.load(path)
    assert again.world == EVERY_KIND and again == project
    # The file says it in the documented words (docs/project-format.md), not just in what reads back.
    root = etree.parse(str(path)).getroot()
    wall = root.find("world/walls/wall[@name='north']")
    assert float(wall.findtext("length")) == 8.0 and float(wall.findtext("thickness")) == 0.15
    shelf = root.find("world/shelves/shelf[@name='rack']")
    assert shelf.findtext("levels") == "4" and shelf.findtext("fixed") == "false"
    assert root.find("world/trees/tree[@name='oak']/yaw") is None  # a tree has no heading
    assert root.find("world/boxes/box[@name='crate']/z") is None  # on the ground: left out


def test_a_file_without_world_loads_and_saves_without_one(tmp_path):
    project = rover_project(tmp_path)
    path = project.save(tmp_path / "old.prj")
    text = path.read_text(encoding="utf-8")
    assert "<world" not in text
    again = Project.load(path)
    assert again.world is None
    again.save()
    assert "<world" not in path.read_text(encoding="utf-8")


def _with_world(tmp_path, world_xml: str):
    project = rover_project(tmp_path)
    path = project.save(tmp_path / "room.prj")
    text = path.read_text(encoding="utf-8").replace("</sear-project>", world_xml + "</sear-project>")
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("<world>") + 1
    return path, line


@pytest.mark.parametrize(("entry", "field", "words"), [
    ("<walls>\n<wall name='w'>\n<length>0</length>\n</wall>\n</walls>", "world.walls.wall.length", "greater than"),
    ("<walls>\n<wall name='w'>\n<length>1500</length>\n</wall>\n</walls>", "world.walls.wall.length", "1000"),
    ("<trees>\n<tree name='t'>\n<x>2e5</x>\n</tree>\n</trees>", "world.trees.tree.x", "100000"),
    ("<boxes>\n<box name='b'>\n<mass>-3</mass>\n</box>\n</boxes>", "world.boxes.box.mass", "greater than"),
    ("<shelves>\n<shelf name='s'>\n<levels>1</levels>\n</shelf>\n</shelves>", "world.shelves.shelf.levels", "2"),
    ("<tables>\n<table name='t'>\n<widht>1</widht>\n</table>\n</tables>", "world.tables.table.widht", "width"),
    ("<trees>\n<tree name='t'>\n<yaw>1</yaw>\n</tree>\n</trees>", "world.trees.tree.yaw", "unknown element"),
    ("<boxes>\n<box>\n<size>1</size>\n</box>\n</boxes>", "world.boxes.box@name", "required"),
    ("<walls>\n<wall name='w'>\n<height>NaN</height>\n</wall>\n</walls>", "world.walls.wall.height", "NaN"),
])
def test_bad_entries_are_refused_naming_file_line_and_field(tmp_path, entry, field, words):
    path, world_line = _with_world(tmp_path, f"<world>\n{entry}\n</world>\n")
    with pytest.raises(ProjectError) as info:
        Project.load(path)
    message = str(info.value)
    # The bad element is on the third line of the entry: <world>, <kind list>, <item>, <field>.
    bad_line = world_line + (2 if field.endswith("@name") else 3)
    assert message.startswith(f"{path}, line {bad_line}, field '{field}'"), message
    assert words in message, message


def test_two_obstacles_of_one_name_are_refused_at_the_second(tmp_path):
    path, world_line = _with_world(tmp_path, "<world>\n<boxes>\n<box name='a'/>\n</boxes>\n<walls>\n"
                                             "<wall name='a'/>\n</walls>\n</world>\n")
    with pytest.raises(ProjectError) as info:
        Project.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line {world_line + 5}, field 'world.walls.a.name'"), message
    assert "two obstacles of the world are named 'a'" in message
    # Positive control: distinct names load.
    path.write_text(path.read_text(encoding="utf-8").replace("<wall name='a'/>", "<wall name='b'/>"),
                    encoding="utf-8")
    assert [o.name for o in Project.load(path).world.obstacles()] == ["a", "b"]


def test_sear_validate_reports_a_bad_world_entry_without_a_traceback(tmp_path):
    path, world_line = _with_world(tmp_path, "<world>\n<walls>\n<wall name='w'>\n<thickness>-1</thickness>\n"
                                             "</wall>\n</walls>\n</world>\n")
    run = subprocess.run([sys.executable, "-m", "sear", "validate", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and "Traceback" not in run.stderr + run.stdout
    assert f"line {world_line + 3}, field 'world.walls.wall.thickness'" in run.stderr + run.stdout


def test_scene_names_duplicates_and_removal():
    scene = Scene()
    first = scene.add(Box(name=scene.free_name("box")))
    assert first.name == "box1" and scene.free_name("box") == "box2"
    copy = scene.duplicate("box1", offset=1.5)
    assert copy.name == "box2" and copy.x == first.x + 1.5 and copy.size == first.size
    assert scene.remove("box1") is first and [o.name for o in scene.obstacles()] == ["box2"]
