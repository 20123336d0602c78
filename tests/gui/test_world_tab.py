"""The World tab (issue 24): the palette, picking, dragging and turning, typed values, delete and duplicate,
each one undo step; the scene tree lists every object. Real mouse drags are in test_x11_world.py."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest
from PySide6.QtCore import QPointF

from sear.gui.settings.window import SettingsWindow
from sear.scene import KINDS, Wall

pytestmark = pytest.mark.gl


@pytest.fixture
def window(demo_window):
    """The demo's settings window (tests/gui/conftest.py) on its World tab."""
    demo_window.tabs.setCurrentIndex(demo_window.tab_pages.index(demo_window.world_tab))
    return demo_window


def _names(w: SettingsWindow) -> list[str]:
    return [] if w.project.world is None else [o.name for o in w.project.world.obstacles()]


def _tree_rows(w: SettingsWindow) -> dict[str, list[str]]:
    """Every object row of the scene tree and its child rows' field names."""
    rows = {}
    for group in range(w.world_tab.tree.topLevelItemCount()):
        top = w.world_tab.tree.topLevelItem(group)
        for index in range(top.childCount()):
            row = top.child(index)
            rows[row.text(0)] = [row.child(i).text(0) for i in range(row.childCount())]
    return rows


def test_the_palette_adds_every_kind_apart_and_undo_takes_each_back(window):
    w, tab = window, window.world_tab
    assert _names(w) == [] and list(_tree_rows(w)) == ["robot"]  # the demo: its robot, no obstacle
    for kind in KINDS:
        tab.palette_buttons[kind].click()
    assert sorted(_names(w)) == sorted(f"{kind}1" for kind in KINDS)
    # Each stands clear of the others and of the robot at the terrain centre (its centre moved east).
    placed = w.project.world.obstacles()
    assert all(o.x > 0.5 for o in placed)
    assert len({o.x for o in placed}) == len(placed)
    rows = _tree_rows(w)
    assert set(rows) == {"robot", *_names(w)}
    wall = w.project.world.find("wall1")
    assert rows["wall1"] == [f.name for f in fields(wall) if f.name not in ("name", "x", "y", "yaw")]
    for count in range(len(KINDS) - 1, -1, -1):
        w.commands["undo"].trigger()
        assert len(_names(w)) == count
    w.commands["redo"].trigger()
    assert _names(w) == ["box1"]


def test_clicking_picks_the_object_under_the_mouse_and_nothing_elsewhere(window):
    tab = window.world_tab
    tab.palette_buttons["wall"].click()
    wall = window.project.world.find("wall1")
    tab.select(None)
    hit = tab.view.pick(tab.view.screen_point((wall.x, wall.y, wall.height / 2)))
    assert hit == ("move", ("obstacle", "wall1"))
    # Positive control for "nothing": the sky above the top edge of the view.
    assert tab.view.pick(QPointF(tab.view.width() / 2, 2.0)) is None
    # The robot at the terrain centre is picked as the robot.
    assert tab.view.pick(tab.view.screen_point((0.0, 0.0, 0.15)))[1] == ("robot", "0")


def test_a_drag_is_one_undo_step_snapped_to_the_grid(window):
    w, tab = window, window.world_tab
    tab.palette_buttons["box"].click()
    box = w.project.world.find("box1")
    start, steps = (box.x, box.y), w.history.index()
    key = ("obstacle", "box1")
    for x, y in ((1.9, 0.3), (2.6, 1.2), (3.26, -1.74)):  # the drag's moves, snapped as they come
        tab.view.moved.emit(key, *tab._snap(x, y))
    tab.view.dropped.emit(key)
    box = w.project.world.find("box1")
    assert (box.x, box.y) == (3.5, -1.5) and w.history.index() == steps + 1
    w.commands["undo"].trigger()
    assert (w.project.world.find("box1").x, w.project.world.find("box1").y) == start


def test_the_knob_turns_in_15_degree_steps_and_a_robot_moves_its_body_start(window):
    w, tab = window, window.world_tab
    tab.palette_buttons["table"].click()
    key = ("obstacle", "table1")
    tab.view.turned.emit(key, tab._snap_yaw(math.radians(50.0)))
    tab.view.dropped.emit(key)
    assert w.project.world.find("table1").yaw == pytest.approx(math.radians(45.0))
    robot = ("robot", "0")
    tab.select(robot)
    tab.view.moved.emit(robot, -2.0, 1.5)
    tab.view.turned.emit(robot, math.pi / 2)
    tab.view.dropped.emit(robot)
    body = w.project.body
    assert (body.start_mode, body.start_east, body.start_north) == ("relative", -2.0, 1.5)
    assert body.rotation == pytest.approx((0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))  # faces north
    w.commands["undo"].trigger()
    assert (w.project.body.start_east, w.project.body.start_north) == (0.0, 0.0)
    assert w.project.body.rotation == (0.0, 0.0, 0.0, 1.0)


def test_typed_values_delete_and_duplicate_are_undo_steps(window):
    w, tab = window, window.world_tab
    tab.palette_buttons["wall"].click()
    length = tab.property_fields["length"]
    length.setValue(6.5)
    assert w.project.world.find("wall1").length == 6.5
    w.commands["undo"].trigger()
    assert w.project.world.find("wall1").length == Wall().length
    tab.select(("obstacle", "wall1"))
    tab.duplicate_action.trigger()
    copy = w.project.world.find("wall2")
    assert copy is not None and copy.x == w.project.world.find("wall1").x + 1.0
    tab.select(("obstacle", "wall1"))
    tab.delete_action.trigger()
    assert _names(w) == ["wall2"] and "wall1" not in _tree_rows(w)
    w.commands["undo"].trigger()
    assert sorted(_names(w)) == ["wall1", "wall2"]


def test_a_movable_box_given_a_height_is_drawn_up_there(window):
    tab = window.world_tab
    tab.palette_buttons["box"].click()
    tab.property_fields["fixed"].setChecked(True)
    tab.property_fields["z"].layout().itemAt(0).widget().setChecked(False)  # "on the ground" off
    tab.property_fields["z"].layout().itemAt(1).widget().setValue(2.0)  # the panel was made anew
    box = window.project.world.find("box1")
    assert (box.fixed, box.z) == (True, 2.0)
    # Its bottom is drawn half an edge below the centre height given (the demo's ground is near 0).
    assert tab.view.placements[("obstacle", "box1")].z == pytest.approx(2.0 - box.size / 2)


def test_every_robot_is_listed_and_a_second_robot_moves_its_own_start(window):
    w, tab = window, window.world_tab
    w.project.duplicate_robot(0, "second")  # starts 2 m north of the first (Project.DUPLICATE_OFFSET)
    w.refresh()
    assert {"robot", "second"} <= set(_tree_rows(w))
    assert tab.view.placements[("robot", "1")].y == pytest.approx(2.0)
    key = ("robot", "1")
    tab.view.moved.emit(key, 4.0, -3.0)
    tab.view.dropped.emit(key)
    second, first = w.project.extra_robots[0].body, w.project.body
    assert (second.start_east, second.start_north) == (4.0, -3.0)
    assert (first.start_east, first.start_north) == (0.0, 0.0)  # the first robot stays


def test_objects_are_drawn_standing_on_a_slope(qtbot, answers, tmp_path):
    from sear.project import Project

    from ..physics.helpers import plane_mesh, rover_project

    project = rover_project(tmp_path, terrain=plane_mesh(slope_deg=10.0))  # z = x tan 10°
    project.save(tmp_path / "slope.prj")
    w = SettingsWindow(Project.load(tmp_path / "slope.prj"))
    qtbot.addWidget(w)
    w.show()
    try:
        w.tabs.setCurrentIndex(w.tab_pages.index(w.world_tab))
        tab = w.world_tab
        table = tab.add("table")
        table.x, table.y = 3.0, 2.0
        box = tab.add("box")
        box.x, box.y = -4.0, 2.0
        tab.update_preview()
        slope = math.tan(math.radians(10.0))
        # A table's feet on the lowest ground under its legs: the downhill legs' outer edge, width / 2 west.
        assert tab.view.placements[("obstacle", table.name)].z == pytest.approx((3.0 - table.width / 2) * slope)
        # A box resting on the highest ground under it: its uphill (east) edge.
        assert tab.view.placements[("obstacle", box.name)].z == pytest.approx((-4.0 + box.size / 2) * slope)
    finally:
        w.dirty = False
        w.stop(wait=True)
