"""The .prj format: bad input of every kind refused with file, line and field; round trip; portability."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sear.errors import ProjectError
from sear.project import WHEEL_IDS, Body, CodeSetup, Dynamics, Project, SimulationSettings, Terrain, Wheel


def _good(tmp_path: Path) -> str:
    project = Project(name="good")
    project.save(tmp_path / "good.prj")
    return (tmp_path / "good.prj").read_text()


def _load_text(tmp_path: Path, text: str) -> ProjectError:
    path = tmp_path / "bad.prj"
    path.write_text(text)
    with pytest.raises(ProjectError) as info:
        Project.load(path)
    assert str(path) in str(info.value)
    return info.value


def test_truncated_file(tmp_path):
    text = _good(tmp_path)
    error = _load_text(tmp_path, text[: len(text) // 2])
    assert error.line is not None and "truncated" in str(error)


def test_wrong_root_element(tmp_path):
    error = _load_text(tmp_path, '<?xml version="1.0"?>\n<project version="1"><name>x</name></project>\n')
    assert error.line == 2 and "<sear-project>" in str(error)


def test_missing_required_field(tmp_path):
    text = _good(tmp_path).replace("<mass>400.0</mass>", "")
    error = _load_text(tmp_path, text)
    assert error.field == "dynamics.mass" and error.line is not None
    assert "mass" in str(error) and "required" in str(error)


def test_number_that_is_not_a_number(tmp_path):
    text = _good(tmp_path).replace("<brake_force>1.0</brake_force>", "<brake_force>strong</brake_force>")
    error = _load_text(tmp_path, text)
    assert error.field == "dynamics.brake_force"
    assert "expected a number" in str(error) and "'strong'" in str(error)
    lines = text.splitlines()
    assert "strong" in lines[error.line - 1]


def test_negative_mass(tmp_path):
    text = _good(tmp_path).replace("<mass>400.0</mass>", "<mass>-5</mass>")
    error = _load_text(tmp_path, text)
    assert error.field == "dynamics.mass" and "greater than" in str(error) and "-5" in str(error)


def test_latitude_out_of_range_and_nan(tmp_path):
    error = _load_text(tmp_path, _good(tmp_path).replace("<latitude>35.3</latitude>", "<latitude>95</latitude>"))
    assert error.field == "terrain.latitude"
    assert "expected a latitude in decimal degrees from -90 to 90, found '95'" in str(error)
    assert "Also" not in str(error)  # libxml2's follow-up errors about the same value are not repeated
    error = _load_text(tmp_path, _good(tmp_path).replace("<latitude>35.3</latitude>", "<latitude>NaN</latitude>"))
    assert error.field == "terrain.latitude"


def test_wheel_ids_unknown_or_repeated(tmp_path):
    good = _good(tmp_path)
    error = _load_text(tmp_path, good.replace('id="left_front"', 'id="front_left"'))
    assert error.field == "wheels.wheel@id" and "use one of: left_front, right_front" in str(error)
    error = _load_text(tmp_path, good.replace('id="right_front"', 'id="left_front"'))
    assert "'left_front' appears more than once" in str(error)


def test_a_quaternion_needs_four_numbers(tmp_path):
    text = _good(tmp_path).replace("<rotation>0.0 0.0 0.0 1.0</rotation>", "<rotation>0 0 1</rotation>")
    error = _load_text(tmp_path, text)
    assert error.field == "body.rotation" and "expected four numbers separated by spaces (x y z w)" in str(error)



def test_an_all_zero_quaternion_names_its_line(tmp_path):
    good = _good(tmp_path)
    text = good.replace("<rotation>0.0 0.0 0.0 1.0</rotation>", "<rotation>0 0 0 0</rotation>")
    line = 1 + text[:text.index("<rotation>")].count("\n")
    error = _load_text(tmp_path, text)
    assert error.field == "body.rotation" and "all zeros" in str(error) and error.line == line > 1

@pytest.mark.parametrize("bad", ["\x01", "\uffff", "\ud800"])
def test_text_no_xml_file_can_hold_is_refused_on_save(tmp_path, bad):
    path = Project(name="fine").save(tmp_path / "p.prj")
    before = path.read_bytes()
    with pytest.raises(ProjectError) as info:
        Project(name=f"a{bad}b").save(path)
    assert info.value.field == "name" and f"U+{ord(bad):04X}" in str(info.value)
    assert path.read_bytes() == before


def test_unknown_element_gets_a_suggestion(tmp_path):
    text = _good(tmp_path).replace("<mass>400.0</mass>", "<mass>400.0</mass><masss>1</masss>")
    assert "did you mean <mass>" in str(_load_text(tmp_path, text))


def test_entity_expansion_bomb_is_refused(tmp_path):
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
            + "".join(f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'
                      for i in range(1, 10))
            + ']>\n<sear-project version="1"><name>&lol9;</name></sear-project>\n')
    assert "DOCTYPE" in str(_load_text(tmp_path, bomb))


def test_external_entity_is_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    xxe = (f'<?xml version="1.0"?>\n<!DOCTYPE p [<!ENTITY x SYSTEM "file://{secret}">]>\n'
           '<sear-project version="1"><name>&x;</name></sear-project>\n')
    error = _load_text(tmp_path, xxe)
    assert "TOP-SECRET-CONTENT" not in str(error) and "DOCTYPE" in str(error)


def test_empty_and_missing_files(tmp_path):
    assert "empty" in str(_load_text(tmp_path, ""))
    with pytest.raises(ProjectError, match="does not exist"):
        Project.load(tmp_path / "nope.prj")


def test_save_keeps_a_backup_and_refuses_invalid_values(tmp_path):
    project = Project(name="first")
    path = project.save(tmp_path / "p.prj")
    first = path.read_bytes()
    project.name = "second"
    project.save()
    assert (tmp_path / "p.prj.bak").read_bytes() == first
    saved = path.read_bytes()
    project.dynamics.mass = -1.0
    with pytest.raises(ProjectError, match="not saved"):
        project.save()
    assert path.read_bytes() == saved
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_paths_below_the_project_folder_are_stored_relative(tmp_path):
    project = Project(name="rel")
    project.terrain.file = tmp_path / "models" / "ground.obj"
    project.code.user_code = Path("/opt/elsewhere/robot.py")
    project.save(tmp_path / "p.prj")
    text = (tmp_path / "p.prj").read_text()
    assert "<file>models/ground.obj</file>" in text
    assert "<user_code>/opt/elsewhere/robot.py</user_code>" in text


def test_a_project_folder_can_be_moved(tmp_path, demo_dir):
    moved = tmp_path / "somewhere" / "else"
    shutil.copytree(demo_dir, moved)
    project = Project.load(moved / "demo.prj")
    for label, path in project.referenced_files().items():
        assert path is not None and path.is_relative_to(moved), label
        assert path.exists(), label


# Files hold no number nearer 0 than sear.fields.SMALLEST_NUMBER but 0 itself (test_limits.py).
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False).filter(
    lambda v: v == 0 or abs(v) >= 1e-100)
def _floats(lo: float, hi: float):
    return st.floats(lo, hi).filter(lambda v: v == 0 or abs(v) >= 1e-100)


positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
non_negative = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False).filter(
    lambda v: v == 0 or abs(v) >= 1e-100)
vec3 = st.tuples(finite, finite, finite)
# Any text an XML file can hold (XML 1.0 excludes control characters, surrogates, U+FFFE and U+FFFF);
# markup characters included, so escaping is exercised.
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="\ufffe\uffff")
                | st.sampled_from("<>&'\"]]>"), min_size=1, max_size=30).filter(lambda s: s.strip() and s == s.strip())
# Loaded quaternions are normalised; generate unit ones (up to float rounding).
quats = st.sampled_from([(0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.7071067811865476, 0.7071067811865476),
                         (1.0, 0.0, 0.0, 0.0)])


def _paths(base: Path):
    segment = st.text("abcdefghij_-0123456789", min_size=1, max_size=8)
    inside = st.lists(segment, min_size=1, max_size=3).map(lambda parts: base.joinpath(*parts, "f.obj"))
    outside = st.lists(segment, min_size=1, max_size=3).map(lambda parts: Path("/", *parts, "g.obj"))
    return st.one_of(st.none(), inside, outside)


def _projects(base: Path):
    paths = _paths(base)
    return st.builds(
        Project,
        name=names,
        terrain=st.builds(Terrain, file=paths, latitude=_floats(-90, 90), longitude=_floats(-180, 180),
                          altitude=finite, scale=positive, heightmap_size=positive, heightmap_height=non_negative),
        body=st.builds(Body, file=paths, scale=positive, start_mode=st.sampled_from(["relative", "absolute"]),
                       start_north=finite, start_east=finite, start_altitude=finite,
                       start_latitude=_floats(-90, 90), start_longitude=_floats(-180, 180),
                       start_abs_altitude=finite, rotation=quats),
        wheels=st.fixed_dictionaries({w: st.builds(Wheel, file=paths, position=st.one_of(st.none(), vec3))
                                      for w in WHEEL_IDS}),
        dynamics=st.builds(Dynamics, mass=positive, engine_force=non_negative, brake_force=non_negative,
                           suspension_stiffness=_floats(1.0, 1000.0), suspension_compression=_floats(0.0, 30.0),
                           suspension_damping=_floats(0.0, 30.0), rolling_resistance=_floats(0.0, 0.5),
                           friction_slip=non_negative, cog_offset=vec3,
                           drive_type=st.sampled_from(["car", "skid"]), max_steering=non_negative,
                           suspension_rest_length=st.one_of(st.none(), positive),
                           max_suspension_travel=st.one_of(st.none(), positive)),
        code=st.builds(CodeSetup, user_code=paths, sensors=paths, debug_shapes=st.booleans(),
                       hook_timeout=_floats(0.01, 3600.0)),
        simulation=st.builds(SimulationSettings, physics_hz=_floats(120.0, 1000.0),
                             control_hz=_floats(0.01, 1000.0)),
    )


# tmp_path is shared by the examples (each overwrites p.prj), which is what the health check warns of.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_round_trip(tmp_path, data):
    project = data.draw(_projects(tmp_path), label="project")
    saved = project.save(tmp_path / "p.prj")
    assert Project.load(saved) == project


def test_external_entity_in_utf16_is_refused_too(tmp_path):
    # A byte search for <!DOCTYPE cannot see UTF-16 text; the parsed document's doctype is checked as well.
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    xxe = (f'<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE p [<!ENTITY x SYSTEM "file://{secret}">]>\n'
           '<sear-project version="1"><name>&x;</name></sear-project>\n')
    path = tmp_path / "u16.prj"
    path.write_bytes(xxe.encode("utf-16"))
    with pytest.raises(ProjectError, match="DOCTYPE") as info:
        Project.load(path)
    assert "TOP-SECRET-CONTENT" not in str(info.value)


def test_saving_into_a_read_only_place_is_a_project_error(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(ProjectError, match="cannot be written"):
        Project(name="p").save(a_file / "p.prj")  # its "folder" is a file


@pytest.mark.parametrize("failing", ["every rename", "the rename onto the project"])
def test_a_save_that_fails_half_way_leaves_the_old_file_whole(tmp_path, monkeypatch, failing):
    path = Project(name="old").save(tmp_path / "p.prj")
    before = path.read_bytes()
    real_replace = os.replace

    def power_cut(src, dst):
        if failing == "every rename" or Path(dst) == path:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(ProjectError, match="No space left on device") as info:
        Project(name="new").save(path)
    assert info.value.file == path
    assert path.read_bytes() == before
    if failing == "every rename":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["p.prj"]  # no .bak made, no temporary file
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["p.prj", "p.prj.bak"]
        assert (tmp_path / "p.prj.bak").read_bytes() == before


def test_an_empty_backup_points_to_the_file_it_backs_up_not_to_a_backup_of_itself(tmp_path):
    (tmp_path / "p.prj.bak").write_text("")
    with pytest.raises(ProjectError) as info:
        Project.load(tmp_path / "p.prj.bak")
    assert "Restore it from p.prj," in info.value.message and ".bak.bak" not in info.value.message
    (tmp_path / "p.prj").write_text("")  # positive control: a project file points to its backup
    with pytest.raises(ProjectError) as info:
        Project.load(tmp_path / "p.prj")
    assert "Restore it from p.prj.bak" in info.value.message


def test_a_saved_camera_view_goes_into_the_file_alone_and_one_of_its_name_is_replaced(demo_copy):
    from sear.project import CameraView, save_camera_view

    path = demo_copy / "demo.prj"
    before = Project.load(path)
    assert before.views == [] and "<views>" not in path.read_text()  # a project without views has none
    save_camera_view(path, CameraView("gate", (1.0, 2.0, 0.5), 12.0, 40.0, 30.0))
    views = save_camera_view(path, CameraView("yard", (0.0, 0.0, 0.0), 30.0, 89.0, -90.0))
    assert [v.name for v in views] == ["gate", "yard"]
    views = save_camera_view(path, CameraView("gate", (3.0, 4.0, 0.0), 6.0, 10.0, 200.0))  # the same name again
    after = Project.load(path)
    assert [(v.name, v.center, v.distance, v.elevation, v.azimuth) for v in after.views] == [
        ("yard", (0.0, 0.0, 0.0), 30.0, 89.0, -90.0), ("gate", (3.0, 4.0, 0.0), 6.0, 10.0, 200.0)]
    after.views = []
    assert after == before  # nothing else in the file changed
