"""The limits `sear run` hits with a URDF, applied by validation: a stated maximum of links, checks linear in
the links (they were cubic: a few hundred links took minutes), a bounded overlap check, and what pybullet's
URDF loader refuses (an <inertial> without its <inertia>) refused with the file, line and element."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pybullet as p
import pytest

from sear.errors import ProjectError
from sear.models.loaded import urdf_robot_models
from sear.models.robotdesc import report as report_module
from sear.models.robotdesc.parse import MAX_LINKS, MAX_SHAPES, load_urdf
from sear.models.robotdesc.report import MAX_OVERLAP_CHECKS, MAX_OVERLAPS, SLOW_MOVING_JOINTS, collision_report
from sear.models.robotdesc.wheels import choose_wheels
from tests.models.bigurdf import big_urdf


def _line_of(text: str, fragment: str) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    assert len(lines) == 1, fragment
    return lines[0]


def _pybullet_loads(resolved: bytes, folder: Path) -> bool:
    """Whether pybullet's URDF loader (as sear.physics.urdf calls it) loads the text."""
    folder.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=folder)) / "loaded.urdf"  # a new name each time: pybullet caches by name
    path.write_bytes(resolved)
    client = p.connect(p.DIRECT)
    try:
        # pybullet prints its complaints on the C stdout; the test only needs the answer.
        saved = os.dup(1)
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 1)
            try:
                body = p.loadURDF(str(path), flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
            except p.error:
                body = -1
            finally:
                os.dup2(saved, 1)
                os.close(saved)
        return body >= 0
    finally:
        p.disconnect(client)


def test_a_urdf_of_ten_thousand_links_is_refused_at_once_naming_the_limit_and_the_line(tmp_path):
    text = big_urdf(10_000)
    path = tmp_path / "big.urdf"
    path.write_text(text)
    with pytest.raises(ProjectError) as caught:
        load_urdf(path)
    # The first link past the limit: base_link, two wheels, then l0, l1, ...
    assert caught.value.line == _line_of(text, f'<link name="l{MAX_LINKS - 3}">')
    assert "10,000 links" in caught.value.message and f"at most {MAX_LINKS:,} links" in caught.value.message


def test_a_urdf_of_the_most_links_is_read_checked_and_built(tmp_path):
    """The positive control of the limit, and the checks linear: every joint lookup of reading, checking and
    building the robot's models counted (they scanned every joint per link, and per pair of links)."""
    path = tmp_path / "big.urdf"
    path.write_text(big_urdf(MAX_LINKS, layout="star"))
    desc = load_urdf(path)
    assert len(desc.links) == MAX_LINKS

    class Counting(dict):  # counts the joints handed out by .values()
        seen = 0

        def values(self):  # type: ignore[override]
            for value in super().values():
                Counting.seen += 1
                yield value

    desc.joints = Counting(desc.joints)
    findings = collision_report(desc)
    wheels = choose_wheels(desc, None, None, None)
    models = urdf_robot_models(desc, wheels)
    assert [w.joint for w in wheels.wheels] == ["left_wheel_joint", "right_wheel_joint"]
    assert len(models.body.faces) > 12 * (MAX_LINKS - 3)  # every box drawn
    assert Counting.seen <= 10 * len(desc.joints), Counting.seen
    # Nothing overlaps (0.3 m apart) but the links of 997 moving joints are said to be slow.
    assert [f.kind for f in findings] == ["size"]
    assert f"{MAX_LINKS - 1} moving joints" in findings[0].message


def test_links_piled_in_one_place_stop_the_overlap_check_after_its_bound(tmp_path, monkeypatch):
    path = tmp_path / "pile.urdf"
    path.write_text(big_urdf(400, joint="fixed", layout="star", spacing=0.0))
    compared = []
    original = report_module.overlap_depth
    monkeypatch.setattr(report_module, "overlap_depth", lambda a, b: (compared.append(1), original(a, b))[1])
    findings = collision_report(load_urdf(path))
    overlaps = [f for f in findings if f.kind == "overlap"]
    assert len(overlaps) == MAX_OVERLAPS + 1 and "stopped" in overlaps[-1].message
    assert all(len(f.links) == 2 for f in overlaps[:-1])
    assert len(compared) <= MAX_OVERLAP_CHECKS


def test_few_moving_joints_are_not_called_slow(tmp_path):
    path = tmp_path / "small.urdf"
    path.write_text(big_urdf(SLOW_MOVING_JOINTS + 1))  # two wheels and 98 revolute joints
    assert [f for f in collision_report(load_urdf(path)) if f.kind == "size"] == []
    path.write_text(big_urdf(SLOW_MOVING_JOINTS + 2))
    assert [f.kind for f in collision_report(load_urdf(path)) if f.kind == "size"] == ["size"]


def test_too_many_shapes_are_refused_naming_the_first_past_the_limit(tmp_path):
    box = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'
    text = ('<?xml version="1.0"?>\n<robot name="r">\n<link name="a">\n' + f"{box}\n" * MAX_SHAPES
            + "</link>\n</robot>\n")
    path = tmp_path / "shapes.urdf"
    path.write_text(text)
    assert len(load_urdf(path).links["a"].collisions) == MAX_SHAPES  # the limit itself is read
    path.write_text(text.replace("</link>", f"{box}\n</link>"))
    with pytest.raises(ProjectError) as caught:
        load_urdf(path)
    assert caught.value.line == 4 + MAX_SHAPES and f"at most {MAX_SHAPES:,}" in caught.value.message


BASE = '''<?xml version="1.0"?>
<robot name="r">
  <link name="a">
    <inertial><mass value="2"/>INERTIA</inertial>
    <collision><geometry><box size="1 1 1"/></geometry></collision>
  </link>
</robot>
'''


@pytest.mark.parametrize(("inertia", "words"), [
    ("", ["<inertial> needs an <inertia", "pybullet does not load"]),
    ('<inertia ixx="1"/>', ['needs iyy="...", izz="..."']),
    ('<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0"/>', ['needs izz="..."']),
])
def test_an_inertial_pybullet_refuses_is_refused_with_its_line(tmp_path, inertia, words):
    path = tmp_path / "r.urdf"
    path.write_text(BASE.replace("INERTIA", inertia))
    with pytest.raises(ProjectError) as caught:
        load_urdf(path)
    assert caught.value.line == 4 and caught.value.field == "link 'a'"
    for word in words:
        assert word in caught.value.message, caught.value.message
    # What validation refuses, pybullet's loader refuses too.
    assert not _pybullet_loads(BASE.replace("INERTIA", inertia).encode(), tmp_path)


@pytest.mark.parametrize(("inertia", "moments"), [
    ('<inertia ixx="1" iyy="2" izz="3"/>', (1, 0, 0, 2, 0, 3)),
    # pybullet reads the products only when all three are there: ixy alone is ignored, as here.
    ('<inertia ixx="1" iyy="2" izz="3" ixy="0.5"/>', (1, 0, 0, 2, 0, 3)),
    ('<inertia ixx="1" iyy="2" izz="3" ixy="0.5" ixz="0" iyz="0"/>', (1, 0.5, 0, 2, 0, 3)),
])
def test_the_inertias_pybullet_loads_are_read_as_it_reads_them(tmp_path, inertia, moments):
    path = tmp_path / "r.urdf"
    path.write_text(BASE.replace("INERTIA", inertia))
    desc = load_urdf(path)
    inertial = desc.links["a"].inertial
    assert inertial is not None and inertial.inertia == moments
    assert _pybullet_loads(desc.resolved, tmp_path)


def test_a_urdf_written_on_one_line_is_loaded_by_pybullet(tmp_path):
    """Found by the URDF fuzz: pybullet's loader refused 100 links with their inertias when they share one
    line (XML_ERROR_PARSING_ATTRIBUTE), and loads them one per line; validation passed it, so the run
    failed. SEAR writes pybullet's copy one element per line."""
    inertial = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>'
    links = "".join(f'<link name="e{i}">{inertial}</link><joint name="j{i}" type="fixed"><parent link="base_link"/>'
                    f'<child link="e{i}"/></joint>' for i in range(100))
    text = f'<?xml version="1.0"?>\n<robot name="r"><link name="base_link"/>{links}</robot>\n'
    path = tmp_path / "oneline.urdf"
    path.write_text(text)
    assert not _pybullet_loads(text.encode(), tmp_path / "as-written")  # the file as it is: refused
    desc = load_urdf(path)
    assert len(desc.links) == 101
    assert _pybullet_loads(desc.resolved, tmp_path / "resolved")


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_a_joint_pybullet_refuses_without_its_limit_is_refused_with_its_line(tmp_path, kind):
    """Found by the URDF fuzz: a revolute or prismatic joint without <limit> validated and pybullet refused it."""
    text = ('<?xml version="1.0"?>\n<robot name="r">\n<link name="a"/>\n<link name="b"/>\n'
            f'<joint name="j" type="{kind}"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>LIMIT</joint>\n'
            '</robot>\n')
    path = tmp_path / "r.urdf"
    path.write_text(text.replace("LIMIT", ""))
    with pytest.raises(ProjectError) as caught:
        load_urdf(path)
    assert caught.value.line == 5 and caught.value.field == "joint 'j'" and "needs a <limit" in caught.value.message
    assert not _pybullet_loads(text.replace("LIMIT", "").encode(), tmp_path)
    path.write_text(text.replace("LIMIT", "<limit/>"))  # the neighbour pybullet loads: read
    assert _pybullet_loads(load_urdf(path).resolved, tmp_path)
