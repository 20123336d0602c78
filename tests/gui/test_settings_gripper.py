"""The Robot Body Model tab's Gripper group: the check box adds a gripper with the default sizes or takes
it away, the fields edit it (with undo), and a project saved with a gripper reads back the same while one
without keeps no <gripper> element."""

from __future__ import annotations

from sear.project import Gripper, Project


def test_gripper_check_box_adds_edits_and_removes_the_gripper(window, demo_copy, tmp_path):
    w = window
    w.open_project(demo_copy / "demo.prj")
    assert w.project.body.gripper is None
    assert not w.body_tab.gripper_check.isChecked() and not w.body_tab.gripper_fields.isEnabled()
    w.body_tab.gripper_check.setChecked(True)
    assert w.project.body.gripper == Gripper() and w.body_tab.gripper_fields.isEnabled()
    w.field_widget("body.gripper.grip_force").set(35.0)
    w.field_widget("body.gripper.grip_force").valueChanged.emit(35.0)
    assert w.project.body.gripper.grip_force == 35.0
    saved = tmp_path / "with_gripper.prj"
    assert w._save_to(saved)
    assert Project.load(saved).body.gripper == Gripper(grip_force=35.0)
    w.history.undo()  # the grip force
    assert w.project.body.gripper == Gripper()
    w.body_tab.gripper_check.setChecked(False)
    assert w.project.body.gripper is None and not w.body_tab.gripper_fields.isEnabled()
    plain = tmp_path / "plain.prj"
    assert w._save_to(plain)
    assert "gripper" not in plain.read_text(encoding="utf-8")
    assert "<gripper>" in saved.read_text(encoding="utf-8")  # positive control
