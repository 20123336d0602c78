"""The Robot Body Model tab with a URDF (issue 17 items 1 and 2): the file chosen there is read, its tree and
wheels shown, marks and package roots written to the project (one undo step each), the collision report shown
in the window and made again on demand, and a bad file explained in the window instead of a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trimesh

from sear.gui.preview import HIGHLIGHT
from sear.gui.urdfview import KIND_ROLE

pytestmark = pytest.mark.gl


def _type_path(field, path: Path) -> None:
    field.edit.setText(str(path))
    field.edit.editingFinished.emit()


def _pybullet_urdf(name: str) -> Path:
    import pybullet_data

    return Path(pybullet_data.getDataPath()) / name


def _tree_item(window, kind: str, name: str):
    matches = [i for i in window.body_tab.urdf_panel._tree_items() if i.data(0, KIND_ROLE) == (kind, name)]
    assert len(matches) == 1, (kind, name)
    return matches[0]


BOX_LINK = """
  <link name="{name}">
    <inertial><mass value="{mass}"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
    <visual><origin xyz="{x} 0 0"/><geometry><box size="{size} {size} {size}"/></geometry></visual>
    <collision><origin xyz="{x} 0 0"/><geometry><box size="{size} {size} {size}"/></geometry></collision>
  </link>"""


def _two_boxes(tmp_path: Path, gap: float) -> Path:
    """A base with two 0.4 m boxes fixed to it, `gap` m apart along x (negative: overlapping), not joined to
    each other, and a continuous wheel on the left."""
    x = 0.4 + gap  # centre distance of the two boxes, whose faces are 0.2 m from their centres
    path = tmp_path / "boxes.urdf"
    path.write_text(f"""<?xml version="1.0"?>
<robot name="boxes">
  <link name="base"/>
  {BOX_LINK.format(name="front_box", mass=2.0, x=x / 2, size=0.4)}
  {BOX_LINK.format(name="rear_box", mass=2.0, x=-x / 2, size=0.4)}
  <link name="wheel">
    <inertial><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.1" length="0.05"/></geometry></collision>
  </link>
  <joint name="front" type="fixed"><parent link="base"/><child link="front_box"/></joint>
  <joint name="rear" type="fixed"><parent link="base"/><child link="rear_box"/></joint>
  <joint name="left_wheel_joint" type="continuous"><parent link="base"/><child link="wheel"/>
    <origin xyz="0 0.5 0"/><axis xyz="0 1 0"/></joint>
</robot>
""")
    return path


def test_a_urdf_chosen_shows_its_tree_wheels_and_preview_and_the_selected_link_is_highlighted(window, tmp_path):
    w = window
    w.tabs.setCurrentIndex(1)
    assert not w.body_tab.urdf_group.isVisibleTo(w)  # control: a mesh body (none here) shows no URDF part
    _type_path(w.body_tab.body_file, _pybullet_urdf("husky/husky.urdf"))
    assert w.body_tab.urdf_group.isVisibleTo(w)
    assert not w.field_widget("body.scale").isEnabled()
    panel = w.body_tab.urdf_panel
    assert panel.summary.text().startswith("Robot 'husky_robot' from husky.urdf: 11 links, 10 joints")
    assert _tree_item(w, "link", "front_left_wheel_link").parent() is _tree_item(w, "joint", "front_left_wheel")
    assert panel.marks() == {"front_left_wheel": "left", "rear_left_wheel": "left", "front_right_wheel": "right",
                             "rear_right_wheel": "right"}
    preview = w.body_tab.body_preview
    assert preview.stack.currentWidget() is preview.view
    assert {"base_link", "front_left_wheel_link", "top_plate_link"} <= set(preview.part_names())
    panel.tree.setCurrentItem(_tree_item(w, "link", "top_plate_link"))
    assert preview.highlighted == "top_plate_link"
    assert tuple(preview._named["top_plate_link"][0][0].opts["color"][:3]) == HIGHLIGHT
    # the wheels tab: its mesh wheels are not used for a URDF robot, and says so
    w.tabs.setCurrentIndex(2)
    assert w.wheels_tab.wheels_urdf_note.isVisibleTo(w) and not any(g.isEnabled() for g in w.wheels_tab.wheel_groups)
    assert "front_left_wheel_link" in w.wheels_tab.wheels_preview.part_names()
    w.tabs.setCurrentIndex(1)
    assert preview.highlighted == "top_plate_link"  # drawn again, the chosen link stays highlighted
    _type_path(w.body_tab.body_file, tmp_path / "body.stl")  # back to a mesh body
    assert not w.body_tab.urdf_group.isVisibleTo(w) and w.field_widget("body.scale").isEnabled()


def test_marking_wheels_writes_the_project_and_undo_takes_it_back(window):
    w = window
    w.tabs.setCurrentIndex(1)
    _type_path(w.body_tab.body_file, _pybullet_urdf("racecar/racecar.urdf"))
    body = w.project.body
    assert (body.left_wheels, body.right_wheels, body.steering_joints) == (None, None, None)  # SEAR's proposal
    combos = w.body_tab.urdf_panel.wheel_combos
    assert combos["left_front_wheel_joint"].currentData() == "left"
    assert combos["left_steering_hinge_joint"].currentData() == "steering"
    combos["left_front_wheel_joint"].setCurrentIndex(combos["left_front_wheel_joint"].findData(None))
    assert body.left_wheels == "left_rear_wheel_joint"
    assert set(body.right_wheels.split()) == {"right_rear_wheel_joint", "right_front_wheel_joint"}
    assert set(body.steering_joints.split()) == {"left_steering_hinge_joint", "right_steering_hinge_joint"}
    assert w.dirty and w.history.undoText() == "Wheel joints"
    # the wheel no longer marked is drawn as a body part, a marked one as a wheel
    colours = {name: tuple(items[0][0].opts["color"][:3]) for name, items in w.body_tab.body_preview._named.items()}
    assert colours["left_front_wheel"] != colours["left_rear_wheel"]
    w.history.undo()  # undo puts a copy of the body back: read it anew
    body = w.project.body
    assert (body.left_wheels, body.right_wheels, body.steering_joints) == (None, None, None)
    assert w.body_tab.urdf_panel.wheel_combos["left_front_wheel_joint"].currentData() == "left"
    w.history.redo()
    assert w.project.body.left_wheels == "left_rear_wheel_joint"
    assert w.body_tab.urdf_panel.wheel_combos["left_front_wheel_joint"].currentData() is None
    w.body_tab.urdf_panel.use_proposal()
    body = w.project.body
    assert (body.left_wheels, body.right_wheels, body.steering_joints) == (None, None, None)


def test_a_package_mesh_is_found_once_its_package_root_is_added(window, tmp_path):
    """`package://` names a ROS package: without the folder that holds it, the window names the missing mesh
    (and where it looked); adding the folder as a package root finds it."""
    w = window
    w.tabs.setCurrentIndex(1)
    workspace = tmp_path / "workspace"
    (workspace / "mybot" / "meshes").mkdir(parents=True)
    trimesh.creation.box((0.5, 0.3, 0.2)).export(workspace / "mybot" / "meshes" / "chassis.stl")
    urdf = tmp_path / "robot" / "mybot.urdf"
    urdf.parent.mkdir()
    urdf.write_text("""<robot name="mybot">
  <link name="chassis">
    <visual><geometry><mesh filename="package://mybot/meshes/chassis.stl"/></geometry></visual>
  </link>
</robot>
""")
    _type_path(w.body_tab.body_file, urdf)
    panel = w.body_tab.urdf_panel
    assert "package://mybot/meshes/chassis.stl" in panel.summary.text()
    assert "was not found" in panel.summary.text() and "line 3" in panel.summary.text()
    assert w.body_tab.body_preview.stack.currentWidget() is w.body_tab.body_preview.message
    assert not panel.tree.isEnabled() and panel.roots_list.isEnabled() and panel.add_root_button.isEnabled()
    panel.add_root(workspace)
    assert w.project.body.package_roots == str(workspace)
    assert panel.summary.text().startswith("Robot 'mybot'")
    assert w.body_tab.body_preview.part_names() == ["chassis"]
    assert w.body_tab.body_preview.stack.currentWidget() is w.body_tab.body_preview.view
    assert w.history.undoText() == "Package roots"
    w.history.undo()
    assert w.project.body.package_roots is None and "was not found" in panel.summary.text()
    assert panel.roots_list.count() == 0


def test_the_collision_report_names_overlapping_links_and_is_made_again_on_demand(window, tmp_path, qtbot):
    w = window
    w.tabs.setCurrentIndex(1)
    path = _two_boxes(tmp_path, gap=0.05)
    _type_path(w.body_tab.body_file, path)
    panel = w.body_tab.urdf_panel
    assert panel.pages.tabText(3) == "Collision report"  # control: 5 cm apart, nothing overlaps
    assert panel.report_list.item(0).text().startswith("Nothing found")
    _two_boxes(tmp_path, gap=-0.1)  # the file changed on disk: now they overlap by 10 cm
    with qtbot.waitSignal(panel.checkRequested):
        panel.check_button.click()
    assert panel.pages.tabText(3) == "Collision report (1)"
    finding = panel.report_list.item(0)
    assert "'front_box'" in finding.text() and "'rear_box'" in finding.text() and "overlap" in finding.text()
    assert "Collision report made again: 1 found" in w.statusBar().currentMessage()
    panel.report_list.setCurrentItem(finding)
    assert set(w.body_tab.body_preview.highlighted_names) == {"front_box", "rear_box"}  # the pair, both highlighted


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("bad.urdf", "<robot name='x'><link name='a'></robot>", "line 1"),
    ("bad.urdf", "<robot name='x'>\n<link name='a'/>\n<joint name='j' type='fixed'><parent link='a'/>"
     "<child link='b'/></joint>\n</robot>", "'b' does not exist"),
    ("bad.urdf", "<robot name='x'>\n<link name='a'/>\n<link name='b'/>\n"
     "<joint name='ab' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
     "<joint name='ba' type='fixed'><parent link='b'/><child link='a'/></joint>\n</robot>", "loop"),
    ("robot.urdf.xacro", "<robot name='x'><link name='a'/></robot>", "expand it first"),
])
def test_a_bad_urdf_is_explained_in_the_window(window, tmp_path, name, text, expected):
    w = window
    w.tabs.setCurrentIndex(1)
    path = tmp_path / name
    path.write_text(text)
    _type_path(w.body_tab.body_file, path)
    message = w.body_tab.urdf_panel.summary.text()
    assert message.startswith("The URDF cannot be used:") and str(path) in message and expected in message
    assert "Traceback" not in message
    assert w.body_tab.body_preview.message.text() in message
    assert w.body_tab.urdf_panel.tree.topLevelItemCount() == 0
    assert w.body_tab.urdf_group.isVisibleTo(w)


def test_a_saved_project_keeps_its_urdf_marks_and_package_roots(window, tmp_path, answers):
    w = window
    w.tabs.setCurrentIndex(1)
    folder = tmp_path / "project"
    folder.mkdir()
    racecar = _pybullet_urdf("racecar/racecar.urdf")
    shutil.copytree(racecar.parent, folder / "racecar")
    (folder / "packages").mkdir()
    _type_path(w.body_tab.body_file, folder / "racecar" / "racecar.urdf")
    answers.save_path = str(folder / "car.prj")
    assert w.save_as()
    w.body_tab.urdf_panel.add_root(folder / "packages")
    assert w.project.body.package_roots == "packages"  # inside the project's folder: kept relative
    combos = w.body_tab.urdf_panel.wheel_combos
    combos["right_steering_hinge_joint"].setCurrentIndex(combos["right_steering_hinge_joint"].findData(None))
    assert w.save()
    answers.open_path = str(folder / "car.prj")
    w.project = type(w.project)()  # forget it, then open the file again
    assert w.open_project(folder / "car.prj")
    assert w.project.body.steering_joints == "left_steering_hinge_joint"
    assert w.body_tab.urdf_panel.wheel_combos["right_steering_hinge_joint"].currentData() is None
    assert w.body_tab.urdf_panel.roots() == [folder / "packages"]
