"""The sensors XML format: every sensor type round-trips; bad files are refused with file, line, field."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sear.errors import ProjectError
from sear.project import WHEEL_IDS
from sear.sensors.config import (
    SENSOR_TYPES,
    AccelerometerConfig,
    CompassConfig,
    GpsConfig,
    GyroscopeConfig,
    InfraredConfig,
    LidarConfig,
    OdometerConfig,
    Pose,
    UltrasonicConfig,
    load_sensors,
    save_sensors,
)


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "sensors.xml"
    path.write_text(f'<?xml version="1.0"?>\n<sear-sensors version="1">\n{body}</sear-sensors>\n')
    return path


def test_demo_sensors_have_one_of_every_type(demo_dir):
    sensors = load_sensors(demo_dir / "sensors.xml")
    assert sorted(s.TYPE for s in sensors) == sorted(SENSOR_TYPES)


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
    (_GOOD.replace(">5<", ">fast<"), 4, "gps.update_rate_hz", "expected a number greater than 0, found 'fast'"),
    (_GOOD.replace(">5<", ">-5<"), 4, "gps.update_rate_hz", "expected a number greater than 0, found '-5'"),
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


small = st.floats(min_value=0.01, max_value=1000.0, allow_nan=False)
angle = st.floats(min_value=-180.0, max_value=180.0, allow_nan=False)
poses = st.builds(Pose, x=angle, y=angle, z=angle, roll=angle, pitch=angle, yaw=angle)
axes = st.sampled_from(["x", "xy", "xyz", "z", "yz"])
text = st.text("abcXYZ -_0123456789", max_size=12)
common = {"model_number": text, "pose": poses, "noise": st.booleans()}

STRATEGIES = {
    InfraredConfig: st.builds(InfraredConfig, output=st.sampled_from(["analog", "digital"]), beam_width_cm=small,
                              min_range_cm=st.floats(0, 5), max_range_cm=st.floats(10, 500), resolution_cm=small,
                              switching_distance_cm=small, update_rate_hz=small, noise_stddev_cm=small, **common),
    UltrasonicConfig: st.builds(UltrasonicConfig, beam_width_cm=small, min_range_cm=st.floats(0, 5),
                                max_range_cm=st.floats(10, 900), resolution_cm=small, update_rate_hz=small,
                                max_incidence_deg=st.floats(0, 90), noise_stddev_cm=small, **common),
    GpsConfig: st.builds(GpsConfig, string_type=st.sampled_from(["decimal", "dms", "nmea"]), update_rate_hz=small,
                         accuracy_m=small, bandwidth_hz=small, **common),
    LidarConfig: st.builds(LidarConfig, angle_step_deg=st.floats(0.25, 5), max_range_m=st.floats(1, 80),
                           min_range_m=st.floats(0, 0.5), resolution_mm=small, spread_deg=st.floats(10, 360),
                           update_rate_hz=small, layers_deg=st.lists(angle, min_size=1, max_size=3).map(tuple),
                           sick_format=st.booleans(), noise_stddev_mm=small, **common),
    AccelerometerConfig: st.builds(AccelerometerConfig, axes=axes, resolution_mv_per_g=small, adc_step_mv=small,
                                   accuracy_pct=st.floats(0, 100), bandwidth_hz=small, max_range_g=small,
                                   noise_stddev_mps2=small, bias_stddev_mps2=small, bias_walk_mps2=small, **common),
    GyroscopeConfig: st.builds(GyroscopeConfig, axes=axes, resolution_dps=small, accuracy_pct=st.floats(0, 100),
                               bandwidth_hz=small, max_range_dps=small, output_unit=st.sampled_from(["deg/s", "rad/s"]),
                               noise_stddev_dps=small, bias_stddev_dps=small, bias_walk_dps=small, **common),
    CompassConfig: st.builds(CompassConfig, axes=axes, accuracy_deg=small, bandwidth_hz=small, resolution_deg=small,
                             output_unit=st.sampled_from(["deg", "rad"]), north_point=st.tuples(angle, angle),
                             **common),
    OdometerConfig: st.builds(OdometerConfig, ticks_per_rev=st.integers(1, 100_000), wheel_radius_m=small,
                              wheels=st.lists(st.sampled_from(WHEEL_IDS), min_size=1, max_size=4).map(tuple),
                              update_rate_hz=small, **common),
}
assert set(STRATEGIES) == set(SENSOR_TYPES.values())


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
