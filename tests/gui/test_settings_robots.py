"""The Project Settings window's robot list (issue 16 item 2): add, duplicate, rename and remove robots,
the tabs edit the robot chosen (and only it), each change one undo step, and the file keeps them all."""

from __future__ import annotations

import pytest

from sear.gui.settings.window import SettingsWindow
from sear.project import Project

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, answers, demo_copy):
    w = SettingsWindow(Project.load(demo_copy / "demo.prj"))
    qtbot.addWidget(w)
    w.show()
    yield w
    w.dirty = False
    w.stop(wait=True)


def _names(w: SettingsWindow) -> list[str]:
    return [w.robots.robot_list.item(i).text() for i in range(w.robots.robot_list.count())]


def test_tabs_edit_the_chosen_robot_and_the_list_is_saved(window, demo_copy):
    w = window
    assert _names(w) == ["robot"] and not w.robots.robot_buttons["remove"].isEnabled()  # the only robot stays
    mass = w.field_widget("dynamics.mass")
    assert w.robots.duplicate_robot()
    assert _names(w) == ["robot", "robot_2"] and w.robots.robot_list.currentRow() == 1
    assert w.field_widget("body.start_north").value() == 2.0  # the copy starts 2 m north
    mass.setValue(33.0)  # edits the chosen (second) robot only
    assert w.project.extra_robots[0].dynamics.mass == 33.0 and w.project.dynamics.mass == 20.0
    w.robots.robot_list.setCurrentRow(0)
    assert mass.value() == 20.0 and w.field_widget("body.start_north").value() == 0.0
    w.robots.robot_list.setCurrentRow(1)
    assert w.robots.rename_robot("scout")
    assert not w.robots.rename_robot("no spaces")  # refused, said in the status bar
    assert "not a robot name" in w.statusBar().currentMessage()
    assert _names(w) == ["robot", "scout"]
    assert w.save()
    again = Project.load(demo_copy / "demo.prj")
    assert [r.name for r in again.robots] == ["robot", "scout"]
    assert again.extra_robots[0].dynamics.mass == 33.0 and again.dynamics.mass == 20.0


def test_each_list_change_is_one_undo_step(window):
    w = window
    w.robots.add_robot()
    w.robots.rename_robot("helper")
    assert _names(w) == ["robot", "helper"]
    assert w.project.extra_robots[0].body.file is None  # an added robot has no models yet
    w.robots.robot_list.setCurrentRow(0)
    assert w.robots.remove_robot()  # removing the first makes the second the first
    assert _names(w) == ["helper"] and w.project.body.file is None
    w.history.undo()
    assert _names(w) == ["robot", "helper"] and w.project.body.file is not None
    w.history.undo()
    assert _names(w) == ["robot", "robot_2"]
    w.history.undo()
    assert _names(w) == ["robot"]
