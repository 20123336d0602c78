"""The URDF part of the Robot Body tab (issue 17 items 1 and 2): the tree of links and joints with their types,
limits and masses, the preview highlighting the selected link, wheels marked left/right, package roots and the
collision report, on a small robot described in the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh
from PySide6.QtGui import QImage

from sear.gui.preview import FADE, FADED, HIGHLIGHT, MeshPreview
from sear.gui.urdfview import KIND_ROLE, Finding, JointRow, LinkRow, RobotRows, UrdfPanel

pytestmark = pytest.mark.gl

BODY_COLOUR = (0.2, 0.3, 0.8)
WHEEL_COLOUR = (0.1, 0.1, 0.1)


def _rows(tmp_path: Path) -> RobotRows:
    """A chassis with two continuous wheel joints, a revolute arm with limits and a link without inertia."""
    return RobotRows(
        path=tmp_path / "bot.urdf", robot="bot", base="chassis",
        links=[LinkRow("chassis", 12.5), LinkRow("wheel_l", 0.75), LinkRow("wheel_r", 0.75), LinkRow("arm", 1.5),
               LinkRow("tip", None)],
        joints=[JointRow("j_wheel_l", "continuous", "chassis", "wheel_l", (0.0, 1.0, 0.0), None, None, 20.0, 30.0),
                JointRow("j_wheel_r", "continuous", "chassis", "wheel_r", (0.0, 1.0, 0.0), None, None, 20.0, 30.0),
                JointRow("j_arm", "revolute", "chassis", "arm", (0.0, 0.0, 1.0), -0.5, 1.0, 5.0, 2.0),
                JointRow("j_tip", "fixed", "arm", "tip")],
        proposal={"j_wheel_l": "left", "j_wheel_r": "right"},
        report=[Finding("links 'arm' and 'wheel_l' overlap at the zero pose", ("arm", "wheel_l"))])


def _parts() -> list:
    body = trimesh.creation.box((1.0, 0.6, 0.3))
    left = trimesh.creation.cylinder(0.2, 0.1)
    left.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0)))
    right = left.copy()
    left.apply_translation((0.0, 0.4, 0.0))
    right.apply_translation((0.0, -0.4, 0.0))
    return [("chassis", body, BODY_COLOUR), ("wheel_l", left, WHEEL_COLOUR), ("wheel_r", right, WHEEL_COLOUR)]


@pytest.fixture
def panel(qtbot, tmp_path):
    panel = UrdfPanel()
    qtbot.addWidget(panel)
    panel.set_rows(_rows(tmp_path), None)
    panel.show()
    return panel


def _item(panel: UrdfPanel, kind: str, name: str):
    matches = [i for i in panel._tree_items() if i.data(0, KIND_ROLE) == (kind, name)]
    assert len(matches) == 1, (kind, name)
    return matches[0]


def test_the_tree_nests_links_and_joints_with_types_limits_and_masses(panel):
    assert panel.tree.topLevelItemCount() == 1
    root = panel.tree.topLevelItem(0)
    assert root.text(0) == "chassis" and root.text(1) == "link" and root.text(3) == "12.5 kg"
    # each joint hangs under its parent link, its child link under it
    assert sorted(root.child(i).text(0) for i in range(root.childCount())) == ["j_arm", "j_wheel_l", "j_wheel_r"]
    arm_joint = _item(panel, "joint", "j_arm")
    assert arm_joint.parent() is root
    assert arm_joint.text(1) == "revolute joint"
    assert arm_joint.text(2) == "-0.5 … 1 rad (-29° … 57°), 5 N·m, 2 rad/s"
    arm = _item(panel, "link", "arm")
    assert arm.parent() is arm_joint and arm.text(3) == "1.5 kg"
    tip = _item(panel, "link", "tip")
    assert tip.parent() is _item(panel, "joint", "j_tip") and tip.parent().parent() is arm
    assert tip.text(3) == "no inertia"
    assert _item(panel, "joint", "j_tip").text(2) == ""  # a fixed joint has no limits
    assert _item(panel, "joint", "j_wheel_l").text(2) == "unlimited, 20 N·m, 30 rad/s"
    assert len(panel._tree_items()) == 5 + 4  # every link and every joint, once


def test_selecting_a_link_or_joint_highlights_that_link_in_the_preview(qtbot, panel):
    preview = MeshPreview()
    qtbot.addWidget(preview)
    preview.show_parts(_parts())
    panel.linkSelected.connect(preview.highlight)

    def colour(name):
        return tuple(round(c, 6) for c in preview._named[name][0][0].opts["color"][:3])

    def faded(rgb):
        return tuple(round(FADE * c + (1 - FADE) * b, 6) for c, b in zip(rgb, FADED, strict=True))

    assert colour("chassis") == BODY_COLOUR and preview.highlighted is None
    panel.tree.setCurrentItem(_item(panel, "link", "wheel_r"))
    assert preview.highlighted == "wheel_r"
    assert colour("wheel_r") == HIGHLIGHT
    assert colour("chassis") == faded(BODY_COLOUR) and colour("wheel_l") == faded(WHEEL_COLOUR)
    panel.tree.setCurrentItem(_item(panel, "joint", "j_wheel_l"))  # a joint: its child link
    assert preview.highlighted == "wheel_l" and colour("wheel_l") == HIGHLIGHT and colour("wheel_r") != HIGHLIGHT
    panel.tree.setCurrentItem(_item(panel, "link", "tip"))  # no geometry: nothing highlighted, nothing faded
    assert preview.highlighted is None and colour("chassis") == BODY_COLOUR and colour("wheel_l") == WHEEL_COLOUR
    assert preview.highlight(("wheel_l", "chassis", "no_such_part"))  # several at once: a pair that overlaps
    assert preview.highlighted_names == ("wheel_l", "chassis")
    assert colour("wheel_l") == colour("chassis") == HIGHLIGHT and colour("wheel_r") == faded(WHEEL_COLOUR)
    assert panel.select_link("wheel_r") and preview.highlighted == "wheel_r"
    assert not panel.select_link("no_such_link") and preview.highlighted == "wheel_r"
    assert panel.select_link(None) and preview.highlighted is None and colour("wheel_r") == WHEEL_COLOUR


def _orange_pixels(preview: MeshPreview, qtbot) -> np.ndarray:
    """(row, column) of the pixels of the preview drawn in the highlight's hue (orange: red well above green,
    green well above blue), whatever the lighting makes of their brightness."""
    qtbot.wait(50)
    image = preview.view.grabFramebuffer().convertToFormat(QImage.Format.Format_RGB888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    rgb = pixels[:, : image.width() * 3].reshape(image.height(), image.width(), 3).astype(int)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return np.argwhere((r > 80) & (r > g + 30) & (g > b + 30))


def test_the_highlighted_link_is_drawn_orange_where_it_is(qtbot):
    preview = MeshPreview()
    qtbot.addWidget(preview)
    preview.resize(400, 320)
    preview.show()
    preview.show_parts(_parts())
    qtbot.waitExposed(preview)
    assert len(_orange_pixels(preview, qtbot)) == 0  # control: nothing highlighted, nothing orange
    preview.highlight("wheel_l")
    left = _orange_pixels(preview, qtbot)
    preview.highlight("wheel_r")
    right = _orange_pixels(preview, qtbot)
    preview.highlight("chassis")
    body = _orange_pixels(preview, qtbot)
    assert len(left) > 50 and len(right) > 50
    assert len(body) > 3 * max(len(left), len(right))  # the body is the largest part
    # The camera looks from the front right (azimuth -60°): the right wheel (y < 0) is drawn nearer the
    # viewer, so lower on the screen and larger than the left one behind the body.
    assert right[:, 0].mean() > left[:, 0].mean()
    preview.highlight(None)
    assert len(_orange_pixels(preview, qtbot)) == 0


def test_wheels_are_prefilled_with_the_proposal_and_marked_by_the_user(qtbot, panel):
    assert set(panel.wheel_combos) == {"j_wheel_l", "j_wheel_r", "j_arm"}  # the joints that turn, not j_tip
    assert panel.marks() == {"j_wheel_l": "left", "j_wheel_r": "right"}
    assert panel.wheel_combos["j_wheel_l"].currentData() == "left"
    assert panel.wheel_combos["j_arm"].currentData() is None
    with qtbot.waitSignal(panel.wheelsChanged) as changed:
        panel.wheel_combos["j_wheel_r"].setCurrentIndex(panel.wheel_combos["j_wheel_r"].findData(None))
    assert changed.args == [{"j_wheel_l": "left"}]
    assert "0 right" in panel.wheel_note.text()
    with qtbot.waitSignal(panel.wheelsChanged) as changed:
        panel.wheel_combos["j_arm"].setCurrentIndex(panel.wheel_combos["j_arm"].findData("steering"))
    assert changed.args == [{"j_wheel_l": "left", "j_arm": "steering"}]
    with qtbot.waitSignal(panel.wheelsChanged) as changed:
        panel.use_proposal()
    assert changed.args == [None]  # None: the project keeps SEAR's proposal
    assert panel.marks() == {"j_wheel_l": "left", "j_wheel_r": "right"}
    assert panel.wheel_combos["j_wheel_r"].currentData() == "right"
    assert panel.wheel_combos["j_arm"].currentData() is None


def test_choosing_a_wheel_row_highlights_its_link(qtbot, panel):
    row = next(r for r in range(panel.wheel_table.rowCount()) if panel.wheel_table.item(r, 0).text() == "j_wheel_r")
    with qtbot.waitSignal(panel.linkSelected) as chosen:
        panel.wheel_table.setCurrentCell(row, 0)
    assert chosen.args == ["wheel_r"]


def test_marks_saved_in_the_project_win_over_the_proposal(qtbot, tmp_path):
    panel = UrdfPanel()
    qtbot.addWidget(panel)
    panel.set_rows(_rows(tmp_path), {"j_wheel_l": "right", "j_wheel_r": "left"})
    assert panel.wheel_combos["j_wheel_l"].currentData() == "right"
    assert panel.wheel_combos["j_wheel_r"].currentData() == "left"


def test_package_roots_are_added_and_removed(qtbot, panel, tmp_path):
    (tmp_path / "a").mkdir()
    with qtbot.waitSignal(panel.rootsChanged) as changed:
        assert panel.add_root(tmp_path / "a")
    assert changed.args == [[tmp_path / "a"]]
    assert not panel.add_root(tmp_path / "a")  # already there: not twice
    with qtbot.waitSignal(panel.rootsChanged) as changed:
        assert panel.add_root(tmp_path / "missing")
    assert changed.args == [[tmp_path / "a", tmp_path / "missing"]]
    assert panel.roots_list.item(1).toolTip() == "This folder does not exist."
    assert panel.roots_list.item(0).toolTip() == ""
    panel.roots_list.setCurrentRow(0)
    with qtbot.waitSignal(panel.rootsChanged) as changed:
        assert panel.remove_root()
    assert changed.args == [[tmp_path / "missing"]]


def test_the_collision_report_is_listed_and_a_finding_highlights_its_link(qtbot, panel):
    assert panel.pages.tabText(3) == "Collision report (1)"
    assert panel.report_list.count() == 1
    assert panel.report_list.item(0).text() == "links 'arm' and 'wheel_l' overlap at the zero pose"
    chosen = []
    panel.linkSelected.connect(chosen.append)
    panel.report_list.setCurrentRow(0)
    assert chosen == ["arm", ("arm", "wheel_l")]  # the first link chosen in the tree, then both highlighted
    assert panel.tree.currentItem().data(0, KIND_ROLE) == ("link", "arm")
    assert panel.selected_link == ("arm", "wheel_l")
    panel.set_report([])
    assert panel.pages.tabText(3) == "Collision report"
    assert panel.report_list.item(0).text().startswith("Nothing found")
    with qtbot.waitSignal(panel.checkRequested):
        panel.check_button.click()


def _pybullet_urdf(name: str) -> Path:
    import pybullet_data

    return Path(pybullet_data.getDataPath()) / name


@pytest.mark.parametrize(("urdf", "left", "right", "steering", "links", "joints"), [
    ("husky/husky.urdf", {"front_left_wheel", "rear_left_wheel"}, {"front_right_wheel", "rear_right_wheel"}, set(),
     11, 10),
    ("racecar/racecar.urdf", {"left_front_wheel_joint", "left_rear_wheel_joint"},
     {"right_front_wheel_joint", "right_rear_wheel_joint"}, {"left_steering_hinge_joint", "right_steering_hinge_joint"},
     13, 12),
])
def test_pybullet_data_robots_show_their_tree_wheels_and_links(qtbot, urdf, left, right, steering, links, joints):
    """The Clearpath Husky and the MIT racecar as pybullet_data ships them: every link and joint in the tree
    (counted here from the file's own <link>/<joint> elements), the wheels SEAR proposes prefilled on the
    right sides, and each wheel link drawn in the preview where its side says (y > 0 left)."""
    from lxml import etree

    from sear.gui.urdfview import robot_parts, robot_rows
    from sear.models.robotdesc.parse import load_urdf

    path = _pybullet_urdf(urdf)
    root = etree.parse(str(path)).getroot()
    assert (len(root.findall("link")), len(root.findall("joint"))) == (links, joints)
    desc = load_urdf(path)
    rows = robot_rows(desc)
    panel = UrdfPanel()
    qtbot.addWidget(panel)
    panel.set_rows(rows, None)
    kinds = [item.data(0, KIND_ROLE)[0] for item in panel._tree_items()]
    assert (kinds.count("link"), kinds.count("joint")) == (links, joints)
    marks = panel.marks()
    assert {n for n, m in marks.items() if m == "left"} == left
    assert {n for n, m in marks.items() if m == "right"} == right
    assert {n for n, m in marks.items() if m == "steering"} == steering
    parts = robot_parts(desc)
    child = {j.get("name"): j.find("child").get("link") for j in root.findall("joint")}
    for joint in left | right:
        meshes = [mesh for name, mesh, _ in parts if name == child[joint]]
        assert meshes, joint
        y = np.mean([m.bounds.mean(axis=0)[1] for m in meshes])
        assert (y > 0.05) if joint in left else (y < -0.05), (joint, y)


def test_a_suspicious_mass_is_drawn_red_and_a_missing_one_grey(qtbot, tmp_path):
    from PySide6.QtCore import Qt

    rows = RobotRows(tmp_path / "m.urdf", "m", "base",
                     [LinkRow("base", 1500.0), LinkRow("arm", 2.0), LinkRow("tip", None), LinkRow("nil", 0.0)],
                     [JointRow("a", "fixed", "base", "arm"), JointRow("t", "fixed", "arm", "tip"),
                      JointRow("n", "fixed", "arm", "nil")])
    panel = UrdfPanel()
    qtbot.addWidget(panel)
    panel.set_rows(rows, None)
    colour = {name: _item(panel, "link", name).foreground(3).color() for name in ("base", "arm", "tip", "nil")}
    assert colour["base"] == colour["nil"] == Qt.GlobalColor.darkRed  # > 1000 kg, and 0 kg
    assert colour["tip"] == Qt.GlobalColor.gray
    assert colour["arm"] not in (Qt.GlobalColor.darkRed, Qt.GlobalColor.gray)  # a plausible mass: the default
