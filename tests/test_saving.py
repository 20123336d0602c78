"""Saving keeps what the user has on disk (issue 12 item 7, issue 13 item 8): a symbolic link stays a link
and its target is written; the file's permissions stay; the comments of a hand-written project or sensors
file stay next to the fields they annotate."""

from __future__ import annotations

import contextlib
import os
import resource
import stat
from pathlib import Path

import pytest
from lxml import etree

from sear.errors import ProjectError
from sear.project import Project
from sear.saving import atomic_write
from sear.sensors.files import load_sensors, save_sensors


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_saving_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path, demo_copy):
    real = tmp_path / "store" / "real.prj"
    real.parent.mkdir()
    real.write_bytes((demo_copy / "demo.prj").read_bytes().replace(b"<file>terrain.obj",
                                                                   f"<file>{demo_copy}/terrain.obj".encode()))
    link = tmp_path / "link.prj"
    link.symlink_to(real)
    project = Project.load(link)
    project.name = "renamed through the link"
    project.save()
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert Project.load(real).name == "renamed through the link"
    assert (real.parent / "real.prj.bak").is_file()  # the backup is made beside the target
    assert not (tmp_path / "link.prj.bak").exists()
    assert not [p for p in os.listdir(real.parent) if p.endswith(".tmp")]


def test_a_chain_of_links_and_a_relative_link_are_followed(tmp_path):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "file.xml"
    target.write_bytes(b"old")
    (tmp_path / "one").symlink_to("data/file.xml")  # relative to the link's folder
    (tmp_path / "two").symlink_to(tmp_path / "one")
    atomic_write(tmp_path / "two", b"new")
    assert (tmp_path / "two").is_symlink() and (tmp_path / "one").is_symlink()
    assert target.read_bytes() == b"new"
    assert (tmp_path / "data" / "file.xml.bak").read_bytes() == b"old"


def test_a_regular_file_is_still_replaced_atomically(tmp_path):
    """Positive control for the link test: without a link the file itself is written, a .bak beside it."""
    path = tmp_path / "p.prj"
    path.write_bytes(b"old")
    atomic_write(path, b"new")
    assert not path.is_symlink() and path.read_bytes() == b"new"
    assert (tmp_path / "p.prj.bak").read_bytes() == b"old"


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o664])
def test_saving_keeps_the_files_permissions(tmp_path, demo_copy, mode):
    path = demo_copy / "demo.prj"
    os.chmod(path, mode)
    old_umask = os.umask(0o077)  # the strictest usual umask must not narrow the file's mode
    try:
        project = Project.load(path)
        project.name = "changed"
        project.save()
    finally:
        os.umask(old_umask)
    assert Project.load(path).name == "changed"
    assert _mode(path) == mode
    assert _mode(demo_copy / "demo.prj.bak") == mode


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    old_umask = os.umask(0o022)
    try:
        Project(name="new").save(tmp_path / "new.prj")
    finally:
        os.umask(old_umask)
    assert _mode(tmp_path / "new.prj") == 0o644


def test_saving_through_a_link_keeps_the_targets_permissions(tmp_path):
    target = tmp_path / "t.prj"
    Project(name="a").save(target)
    os.chmod(target, 0o640)
    (tmp_path / "l.prj").symlink_to(target)
    project = Project.load(tmp_path / "l.prj")
    project.name = "b"
    project.save()
    assert _mode(target) == 0o640 and Project.load(target).name == "b"


HAND_WRITTEN = """<?xml version="1.0" encoding="UTF-8"?>
<!-- my rover, written by hand -->
<sear-project version="1">
  <name>Hand</name>
  <terrain>
    <file>ground.obj</file>
    <latitude>35.3</latitude>
    <longitude>-80.7</longitude>
  </terrain>
  <body>
    <!-- the chassis from the lab's CAD -->
    <file>body.stl</file>
  </body>
  <wheels>
    <wheel id="left_front"><file>w.obj</file></wheel>
    <wheel id="right_front"><file>w.obj</file></wheel>
    <wheel id="left_rear"><file>w.obj</file></wheel>
    <wheel id="right_rear"><file>w.obj</file></wheel>
  </wheels>
  <dynamics>
    <!-- weighed on 3 May: 18.5 kg with batteries -->
    <mass>18.5</mass>
    <engine_force>40</engine_force>
    <brake_force>20</brake_force>
    <!-- stiffer springs since the new dampers -->
    <suspension_stiffness>40</suspension_stiffness>
    <suspension_compression>2.3</suspension_compression>
    <suspension_damping>2.4</suspension_damping>
  </dynamics>
</sear-project>
"""


def _comment_before(root: etree._Element, tag: str) -> str | None:
    """The text of the comment just before the (first) element `tag` in the document."""
    el = next(root.iter(tag))
    previous = el.getprevious()
    return previous.text if previous is not None and previous.tag is etree.Comment else None


def test_comments_of_a_hand_written_project_stay_next_to_their_fields(tmp_path):
    path = tmp_path / "hand.prj"
    path.write_text(HAND_WRITTEN)
    project = Project.load(path)
    project.dynamics.mass = 19.25            # an edit of an annotated field
    project.dynamics.max_steering = 0.4      # a field the file did not have
    project.code.user_code = tmp_path / "robot.py"  # a section the file did not have
    project.save()
    text = path.read_text()
    root = etree.fromstring(path.read_bytes())
    assert "<!-- my rover, written by hand -->" in text
    assert _comment_before(root, "mass") == " weighed on 3 May: 18.5 kg with batteries "
    assert _comment_before(root, "suspension_stiffness") == " stiffer springs since the new dampers "
    assert _comment_before(root, "file") is None and _comment_before(next(root.iter("body")).find("file"), "file") \
        == " the chassis from the lab's CAD "
    assert "<mass>19.25</mass>" in text
    assert "<engine_force>40</engine_force>" in text  # unchanged values keep their spelling
    again = Project.load(path)
    assert again.dynamics.mass == 19.25 and again.dynamics.max_steering == 0.4
    assert again.code.user_code == tmp_path / "robot.py"
    assert again == project
    # The new elements are indented like their neighbours.
    assert "\n    <max_steering>0.4</max_steering>\n" in text
    assert "\n  <code>\n    <user_code>robot.py</user_code>\n" in text


def test_a_removed_optional_field_goes_and_the_layout_stays_whole(tmp_path):
    path = tmp_path / "hand.prj"
    path.write_text(HAND_WRITTEN.replace("<suspension_damping>2.4</suspension_damping>",
                                         "<suspension_damping>2.4</suspension_damping>\n"
                                         "    <suspension_rest_length>0.1</suspension_rest_length>"))
    project = Project.load(path)
    assert project.dynamics.suspension_rest_length == 0.1
    project.dynamics.suspension_rest_length = None
    project.save()
    text = path.read_text()
    assert "suspension_rest_length" not in text
    assert "    <suspension_damping>2.4</suspension_damping>\n    <friction_slip>" in text
    assert "\n<!-- my rover, written by hand -->\n<sear-project" in text
    assert Project.load(path) == project


def test_a_file_without_comments_is_written_as_before(tmp_path):
    """Positive control: a project saved from scratch is SEAR's usual pretty-printed document."""
    project = Project(name="plain")
    path = project.save(tmp_path / "plain.prj")
    project.dynamics.mass = 12.0
    project.save()
    fresh = tmp_path / "fresh.prj"
    Project.load(path).save(fresh)
    assert path.read_bytes() == fresh.read_bytes()
    assert b"<!--" not in path.read_bytes()


SENSORS = """<?xml version='1.0' encoding='UTF-8'?>
<!-- sensors of my rover -->
<sear-sensors version="1">
  <!-- the cheap one from the kit -->
  <infrared name="front_ir">
    <pose><x>0.30</x><z>0.02</z></pose>
    <min_range_cm>10</min_range_cm>
    <!-- measured: 78 cm, not the datasheet's 80 -->
    <max_range_cm>78</max_range_cm>
  </infrared>
  <!-- GPS on the mast -->
  <gps name="gps">
    <pose><x>-0.10</x><z>0.13</z></pose>
  </gps>
</sear-sensors>
"""


def test_comments_of_a_hand_written_sensors_file_stay(tmp_path):
    path = tmp_path / "sensors.xml"
    path.write_text(SENSORS)
    sensors = load_sensors(path)
    sensors[0].max_range_cm = 75.0
    sensors[1].name = "mast_gps"  # renamed: keeps its place and its comment
    save_sensors(path, sensors)
    root = etree.fromstring(path.read_bytes())
    text = path.read_text()
    assert "<!-- sensors of my rover -->" in text
    assert _comment_before(root, "infrared") == " the cheap one from the kit "
    assert _comment_before(root, "max_range_cm") == " measured: 78 cm, not the datasheet's 80 "
    assert _comment_before(root, "gps") == " GPS on the mast "
    assert next(root.iter("gps")).get("name") == "mast_gps"
    assert "<max_range_cm>75.0</max_range_cm>" in text and "<min_range_cm>10</min_range_cm>" in text
    assert load_sensors(path) == sensors


def test_sensors_reordered_and_removed_keep_their_comments(tmp_path):
    path = tmp_path / "sensors.xml"
    path.write_text(SENSORS)
    ir, gps = load_sensors(path)
    save_sensors(path, [gps, ir])
    assert load_sensors(path) == [gps, ir]
    save_sensors(path, [ir])
    assert load_sensors(path) == [ir]
    root = etree.fromstring(path.read_bytes())
    assert _comment_before(root, "max_range_cm") == " measured: 78 cm, not the datasheet's 80 "
    assert not list(root.iter("gps"))


def test_sensors_file_through_a_link_keeps_link_and_mode(tmp_path):
    target = tmp_path / "real.xml"
    target.write_text(SENSORS)
    os.chmod(target, 0o644)
    link = tmp_path / "sensors.xml"
    link.symlink_to(target)
    sensors = load_sensors(link)
    sensors[0].min_range_cm = 12.0
    save_sensors(link, sensors)
    assert link.is_symlink() and _mode(target) == 0o644
    assert load_sensors(target)[0].min_range_cm == 12.0


@contextlib.contextmanager
def _file_size_limit(size: int):
    """Writes past `size` bytes fail with EFBIG while inside (the kernel's RLIMIT_FSIZE; Python ignores
    SIGXFSZ), as a write onto a full disk fails: only what the save writes happens inside."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no file size limit on this platform")
@pytest.mark.parametrize("with_backup", [True, False], ids=["a .bak before", "no .bak before"])
def test_a_save_that_cannot_write_leaves_the_file_and_its_backup_as_they_were(tmp_path, with_backup):
    """Issue 25 item 12: a save onto a full disk left the current file hard-linked as its .bak, replacing the
    older backup (or adding one where there was none)."""
    path = atomic_write(tmp_path / "p.prj", b"first version\n")
    if with_backup:
        atomic_write(path, b"second version\n")
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    with _file_size_limit(64), pytest.raises(ProjectError, match=r"not saved.*previous version is unchanged"):
        atomic_write(path, b"a third version that does not fit on the disk " * 4)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before
    assert sorted(before) == (["p.prj", "p.prj.bak"] if with_backup else ["p.prj"])  # positive control
    atomic_write(path, b"a third version that fits\n")  # the same save with room succeeds
    assert path.read_bytes() == b"a third version that fits\n"
    assert (tmp_path / "p.prj.bak").read_bytes() == before["p.prj"]
