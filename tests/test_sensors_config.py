"""The sensors XML format: every sensor type round-trips; bad files are refused with file, line, field."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sear.errors import ProjectError
from sear.fields import FieldInfo, fields_of
from sear.sensors.compass import CompassConfig
from sear.sensors.files import load_sensors, save_sensors
from sear.sensors.gps import GpsConfig
from sear.sensors.registry import definitions


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "sensors.xml"
    path.write_text(f'<?xml version="1.0"?>\n<sear-sensors version="1">\n{body}</sear-sensors>\n')
    return path


def test_demo_sensors_have_one_of_every_type(demo_dir):
    sensors = load_sensors(demo_dir / "sensors.xml")
    # The cameras are left out: the demo's log (CSV columns, array files) stays as it was.
    assert sorted(s.TYPE for s in sensors) == sorted(set(definitions()) - {"depth_camera", "rgb_camera"})


def test_duplicate_names_name_both_entries(tmp_path):
    path = _write(tmp_path, '  <gps name="front"/>\n  <compass name="a"/>\n  <lidar name="front"/>\n')
    with pytest.raises(ProjectError) as info:
        load_sensors(path)
    assert "lines 3 and 5" in str(info.value) and info.value.line == 5 and "'front'" in str(info.value)


def test_inconsistent_ranges_are_refused(tmp_path):
    path = _write(tmp_path, '  <infrared name="ir">\n    <min_range_cm>90</min_range_cm>\n  </infrared>\n')
    with pytest.raises(ProjectError) as info:
        load_sensors(path)
    assert info.value.line == 4 and info.value.field == "infrared.min_range_cm"


def test_unknown_type_and_field_get_suggestions(tmp_path):
    with pytest.raises(ProjectError, match="did you mean <gyroscope>"):
        load_sensors(_write(tmp_path, '  <gyroscop name="g"/>\n'))
    with pytest.raises(ProjectError, match="did you mean <bandwidth_hz>"):
        load_sensors(_write(tmp_path, '  <gyroscope name="g"><bandwith_hz>3</bandwith_hz></gyroscope>\n'))


def test_bad_values_name_the_field(tmp_path):
    with pytest.raises(ProjectError) as info:
        load_sensors(_write(tmp_path, '  <gyroscope name="g">\n    <output_unit>rpm</output_unit>\n  </gyroscope>\n'))
    assert info.value.field == "gyroscope.output_unit" and "deg/s, rad/s" in str(info.value)
    with pytest.raises(ProjectError) as info:
        load_sensors(_write(tmp_path, '  <lidar name="l"><max_range_m>-8</max_range_m></lidar>\n'))
    assert info.value.field == "lidar.max_range_m"
    with pytest.raises(ProjectError, match="attribute 'name' is required"):
        load_sensors(_write(tmp_path, "  <gps/>\n"))


def test_hostile_xml_is_refused(tmp_path):
    path = tmp_path / "s.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
                    '<sear-sensors version="1"><gps name="&x;"/></sear-sensors>\n')
    with pytest.raises(ProjectError, match="DOCTYPE"):
        load_sensors(path)


_BOMB = ('<?xml version="1.0"?>\n<!DOCTYPE s [\n <!ENTITY a "aaaaaaaaaa">\n'
         + "".join(f' <!ENTITY a{i} "{("&a" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n' for i in range(1, 10))
         + ']>\n<sear-sensors version="1"><gps name="&a9;"/></sear-sensors>\n')
_GOOD = ('<?xml version="1.0"?>\n<sear-sensors version="1">\n  <gps name="g">\n'
         '    <update_rate_hz>5</update_rate_hz>\n  </gps>\n</sear-sensors>\n')


@pytest.mark.parametrize(("text", "line", "field", "words"), [
    (_GOOD[:70], 4, None, "truncated"),
    (_GOOD.replace("sear-sensors", "sensors"), 2, "sensors", "expected <sear-sensors>"),
    (_GOOD.replace(">5<", ">fast<"), 4, "gps.update_rate_hz",
     "expected a number greater than 0 (at most 1e9), found 'fast'"),
    (_GOOD.replace(">5<", ">-5<"), 4, "gps.update_rate_hz",
     "expected a number greater than 0 (at most 1e9), found '-5'"),
    (_GOOD.replace(' version="1"', ""), 2, "version", "'version' is required"),
    (_BOMB, 2, None, "DOCTYPE"),
])
def test_broken_sensors_files_name_line_and_field(tmp_path, text, line, field, words):
    path = tmp_path / "sensors.xml"
    path.write_text(text)
    with pytest.raises(ProjectError) as info:
        load_sensors(path)
    assert info.value.file == path and info.value.line == line and info.value.field == field
    assert words in str(info.value)


def test_names_with_outer_spaces_or_unstorable_characters_are_not_saved(tmp_path):
    with pytest.raises(ProjectError, match="starts or ends with spaces"):
        save_sensors(tmp_path / "s.xml", [GpsConfig(name=" gps")])
    with pytest.raises(ProjectError, match="U\\+0007"):
        save_sensors(tmp_path / "s.xml", [GpsConfig(name="gps", model_number="bell\a")])
    with pytest.raises(ProjectError, match="expected a non-empty text on one line") as info:
        save_sensors(tmp_path / "s.xml", [GpsConfig(name="two\nlines")])
    assert info.value.field == "gps@name"
    assert not (tmp_path / "s.xml").exists()


def test_save_refuses_duplicates_without_touching_the_file(tmp_path):
    path = save_sensors(tmp_path / "s.xml", [GpsConfig(name="a")])
    before = path.read_bytes()
    with pytest.raises(ProjectError, match="unique"):
        save_sensors(path, [GpsConfig(name="a"), CompassConfig(name="a")])
    assert path.read_bytes() == before


def _values(info: FieldInfo) -> st.SearchStrategy:
    """Values a field may hold, from its declaration alone: a type added later is tested with no edit here."""
    if info.enumeration:
        return st.sampled_from(info.enumeration)
    if info.choices:
        return st.lists(st.sampled_from(info.choices), min_size=1, max_size=len(info.choices)).map(tuple)
    if info.kind == "axes":
        return st.sampled_from(["x", "xy", "xyz", "z", "yz"])
    if dataclasses.is_dataclass(info.type):
        return st.builds(info.type, **{f.name: _values(f) for f in fields_of(info.type)})
    if info.type is bool:
        return st.booleans()
    if info.type in (int, float):
        # Within the declared bounds; positive numbers from 0.01, as datasheet figures are.
        lo = -1000.0 if info.minimum is None else max(-1000.0, info.minimum + (0.01 if info.exclusive_minimum else 0))
        hi = 1000.0 if info.maximum is None else min(1000.0, info.maximum)
        if info.type is int:
            return st.integers(int(lo) + (1 if info.exclusive_minimum else 0),
                               100_000 if info.maximum is None else int(hi))
        # Files hold no number nearer 0 than sear.fields.SMALLEST_NUMBER but 0 itself.
        return st.floats(min_value=lo, max_value=hi, allow_nan=False).filter(lambda v: v == 0 or abs(v) >= 1e-100)
    if typing.get_origin(info.type) is tuple:
        args = typing.get_args(info.type)
        if Ellipsis in args:
            return st.lists(angle, min_size=1, max_size=3).map(tuple)
        return st.tuples(*[angle] * len(args))
    if info.type is str:
        return text
    raise AssertionError(f"no strategy for field {info.name!r} of type {info.type!r}: add one here")


def _definitions(cls: type) -> st.SearchStrategy:
    """Definitions of type `cls` with every field drawn, consistent across fields (problems() empty)."""
    drawn = {f.name: _values(f) for f in fields_of(cls) if f.name != "name"}
    return st.builds(cls, **drawn).filter(lambda sensor: not sensor.problems())


angle = st.floats(min_value=-180.0, max_value=180.0, allow_nan=False).filter(lambda v: v == 0 or abs(v) >= 1e-100)
text = st.text("abcXYZ -_0123456789", max_size=12)
STRATEGIES = {cls: _definitions(cls) for cls in definitions().values()}


# Names: any text an XML attribute can hold, markup characters included, unique and without outer spaces.
sensor_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="\ufffe\uffff")
                       | st.sampled_from("<>&'\"\t"), min_size=1, max_size=16).filter(lambda s: s.strip() == s != "")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(*STRATEGIES.values()), min_size=0, max_size=8),
       st.lists(sensor_names, min_size=8, max_size=8, unique=True))
def test_round_trip_of_a_mix_of_sensors(tmp_path, sensors, names):
    for sensor, name in zip(sensors, names, strict=False):
        sensor.name = name
    assert load_sensors(save_sensors(tmp_path / "s.xml", sensors)) == sensors


@pytest.mark.parametrize("cls", list(STRATEGIES), ids=lambda c: c.TYPE)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_round_trip_of_each_sensor_type(tmp_path, cls, data):
    sensor = data.draw(STRATEGIES[cls])
    sensor.name = f"the {cls.TYPE}"
    assert load_sensors(save_sensors(tmp_path / "s.xml", [sensor])) == [sensor]


def test_save_keeps_the_previous_file_as_bak(tmp_path):
    path = save_sensors(tmp_path / "sensors.xml", [GpsConfig(name="first")])
    first = path.read_bytes()
    save_sensors(path, [GpsConfig(name="second")])
    assert (tmp_path / "sensors.xml.bak").read_bytes() == first
    assert [s.name for s in load_sensors(path)] == ["second"]
