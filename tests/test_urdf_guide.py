"""The URDF page of the user guide (docs/urdf.md) tells the truth about its own example robot: the
diffbot loads, SEAR proposes its wheels as the page says, its collision report is empty, and with its
wheels moved forward as the page says the report names both wheel/bumper pairs."""

from __future__ import annotations

import re
from pathlib import Path

from sear.models.robotdesc.parse import load_urdf
from sear.models.robotdesc.report import collision_report
from sear.models.robotdesc.wheels import propose_wheels

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "urdf.md"


def _diffbot(tmp_path: Path, wheel_x: str = "0.08") -> Path:
    block = re.findall(r"```xml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)[0]
    moved = block.replace('xyz="0.08 0.18 -0.02"', f'xyz="{wheel_x} 0.18 -0.02"').replace(
        'xyz="0.08 -0.18 -0.02"', f'xyz="{wheel_x} -0.18 -0.02"')
    assert (moved != block) == (wheel_x != "0.08")  # the page's wheel origins are where this test moves them
    path = tmp_path / "diffbot.urdf"
    path.write_text(moved, encoding="utf-8")
    return path


def test_the_guides_diffbot_has_its_wheels_proposed_and_an_empty_report(tmp_path):
    desc = load_urdf(_diffbot(tmp_path))
    assert set(desc.links) == {"base_link", "left_wheel", "right_wheel", "caster", "bumper", "laser"}
    proposal = propose_wheels(desc)
    assert [w.joint for w in proposal.left] == ["left_wheel_joint"]
    assert [w.joint for w in proposal.right] == ["right_wheel_joint"]
    assert proposal.steering == ()
    assert collision_report(desc) == []


def test_the_guides_diffbot_with_its_wheels_moved_forward_overlaps_its_bumper(tmp_path):
    found = collision_report(load_urdf(_diffbot(tmp_path, wheel_x="0.17")))
    assert sorted(sorted(f.links) for f in found) == [["bumper", "left_wheel"], ["bumper", "right_wheel"]]


def test_the_guides_screenshots_are_there():
    images = re.findall(r"!\[[^\]]*\]\((images/[^)]+)\)", GUIDE.read_text(encoding="utf-8"))
    assert sorted(images) == ["images/urdf-husky-tree.png", "images/urdf-racecar-wheels.png", "images/urdf-report.png"]
    assert all((GUIDE.parent / image).is_file() for image in images)
