"""The run's limits, checked by validation (issue 12 items 3 and 5): numbers a run cannot honour are
refused naming the file, line and field; `--duration` must be a finite positive number; validation never
waits on a FIFO and applies the run's size limits; many sensors validate quickly.

Expected lines and figures are worked out here from the text the test writes, not taken from the code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from sear import cli
from sear.errors import ProjectError
from sear.loading import load_project
from sear.project import Project


def _replace(path: Path, tag: str, value: str) -> int:
    """Set <tag> in a file to `value` (added into <simulation>/<code> when absent); its line number."""
    text = path.read_text()
    if f"<{tag}>" in text:
        text = re.sub(f"<{tag}>[^<]*</{tag}>", f"<{tag}>{value}</{tag}>", text, count=1)
    else:
        text = text.replace("<debug_shapes>", f"<{tag}>{value}</{tag}><debug_shapes>", 1)
    path.write_text(text)
    return text[: text.index(f"<{tag}>{value}<")].count("\n") + 1


@pytest.mark.parametrize(("tag", "value", "field"), [
    ("mass", "1e999", "dynamics.mass"),                  # overflows to infinity
    ("mass", "-1e400", "dynamics.mass"),
    ("control_hz", "4.9e-324", "simulation.control_hz"),  # a denormal
    ("mass", "1e-320", "dynamics.mass"),
    ("mass", "NaN", "dynamics.mass"),
    ("physics_hz", "1e9", "simulation.physics_hz"),       # a run of 1 s would take for ever
    ("physics_hz", "60", "simulation.physics_hz"),        # the suspension would not be stable
    ("hook_timeout", "1e300", "code.hook_timeout"),       # "timestamp out of range" in the run
    ("start_north", "2e9", "body.start_north"),           # past NUMBER_LIMIT
])
def test_hostile_project_numbers_are_refused_naming_file_line_and_field(demo_copy, tag, value, field):
    prj = demo_copy / "demo.prj"
    line = _replace(prj, tag, value)
    loaded = load_project(prj)
    assert loaded.project is None and len(loaded.problems) == 1
    problem = loaded.problems[0]
    assert (problem.file, problem.line, problem.field) == (prj, line, field)
    assert value in problem.message


def test_the_bounds_are_inclusive_where_the_docs_say(demo_copy):
    """Positive control: the documented extremes load."""
    prj = demo_copy / "demo.prj"
    for tag, value in [("physics_hz", "1000"), ("physics_hz", "120"), ("hook_timeout", "3600"),
                       ("hook_timeout", "0.01"), ("mass", "1e-100"), ("control_hz", "0.01")]:
        _replace(prj, tag, value)
        assert load_project(prj).ok, (tag, value)


@pytest.mark.parametrize(("sensor", "tag", "value", "message", "named"), [
    ("accelerometer", "adc_step_mv", "1e-320", "too near 0", "adc_step_mv"),
    ("infrared", "resolution_cm", "0.00001", "rays per sample", "resolution_cm"),
    ("infrared", "beam_width_cm", "1e400", "found '1e400'", "beam_width_cm"),
    # Too wide for its resolution: the refusal names the resolution, the field to change.
    ("ultrasonic", "beam_width_cm", "1000000", "rays per sample", "resolution_cm"),
    ("lidar", "angle_step_deg", "0.0001", "1,000,000 rays", "angle_step_deg"),
])
def test_hostile_sensor_numbers_are_refused_naming_file_line_and_field(demo_copy, sensor, tag, value, message,
                                                                       named):
    xml = demo_copy / "sensors.xml"
    text = xml.read_text()
    start = text.index(f"<{sensor} ")
    head, tail = text[:start], text[start:]
    tail = re.sub(f"<{tag}>[^<]*</{tag}>", f"<{tag}>{value}</{tag}>", tail, count=1)
    xml.write_text(head + tail)
    line = head.count("\n") + tail[: tail.index(f"<{named}>")].count("\n") + 1
    problems = load_project(demo_copy / "demo.prj").problems
    assert len(problems) == 1
    problem = problems[0]
    assert problem.file == xml and problem.line == line and problem.detail == f"{sensor}.{named}", problem
    assert message in problem.message


def test_the_rays_of_all_sensors_together_are_bounded(demo_copy):
    xml = demo_copy / "sensors.xml"
    lidar = re.search(r"<lidar .*?</lidar>", xml.read_text(), re.S)
    assert lidar is not None and "<angle_step_deg>1</angle_step_deg>" in lidar.group()
    assert "<spread_deg>180</spread_deg>" in lidar.group() and "<update_rate_hz>10</update_rate_hz>" in lidar.group()

    def lidars(count: int) -> None:
        copies = "".join(lidar.group().replace('name="lidar"', f'name="l{i}"') for i in range(count))
        xml.write_text(f'<?xml version="1.0"?>\n<sear-sensors version="1">{copies}</sear-sensors>\n')

    lidars(2778)  # 180 rays at 10 Hz each: 5,000,400 rays a second, more than the 5,000,000 SEAR casts
    problems = load_project(demo_copy / "demo.prj").problems
    assert len(problems) == 1 and "5,000,400 rays per simulated second" in problems[0].message
    assert problems[0].file == xml
    lidars(2777)  # positive control: 4,998,600 fit
    assert load_project(demo_copy / "demo.prj").ok


def test_saving_refuses_a_number_loading_would(tmp_path):
    project = Project(name="p")
    project.dynamics.mass = 4.9e-324
    with pytest.raises(ProjectError, match=r"dynamics\.mass"):
        project.save(tmp_path / "p.prj")
    assert not (tmp_path / "p.prj").exists()
    project.dynamics.mass = 1e-100
    Project.load(project.save(tmp_path / "p.prj"))  # positive control


@pytest.mark.parametrize("duration", ["inf", "nan", "-1", "1e999", "0", "-inf"])
def test_duration_must_be_a_finite_positive_number(demo_copy, duration, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["run", str(demo_copy / "demo.prj"), "--headless", f"--duration={duration}"])
    assert info.value.code == 2  # argparse's usage status
    err = capsys.readouterr().err
    assert "--duration" in err and "Traceback" not in err


def test_validate_does_not_wait_on_a_fifo(demo_copy):
    """A FIFO named terrain.obj (and one named as the project) is refused at once; opening it would wait
    for a writer for ever. In a subprocess with a time-out, so a regression cannot hang the suite."""
    (demo_copy / "terrain.obj").unlink()
    os.mkfifo(demo_copy / "terrain.obj")
    os.mkfifo(demo_copy / "pipe.prj")
    for target, expected in (("demo.prj", "terrain.obj is a named pipe"), ("pipe.prj", "pipe.prj is a named pipe")):
        done = subprocess.run([sys.executable, "-m", "sear", "validate", target], cwd=demo_copy, timeout=120,
                              capture_output=True, text=True)
        assert done.returncode == 1 and expected in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_validate_and_run_refuse_an_oversized_heightmap_alike(demo_copy, capsys):
    """8194 x 8193 pixels is past the documented 8193² maximum: `validate` and `run` print the same problem."""
    Image.fromarray(np.zeros((8193, 8194), dtype=np.uint8)).save(demo_copy / "big.png")
    prj = demo_copy / "demo.prj"
    prj.write_text(prj.read_text().replace("<file>terrain.obj</file>", "<file>big.png</file>"))
    assert cli.main(["validate", str(prj)]) == 1
    validate_err = capsys.readouterr().err
    assert cli.main(["run", str(prj), "--headless", "--duration", "1"]) == 1
    run_err = capsys.readouterr().err
    line = next(x for x in validate_err.splitlines() if "8194 x 8193" in x)
    assert "8193 x 8193" in line and line in run_err.splitlines()


def test_ten_thousand_sensors_validate_within_five_seconds(demo_copy):
    """The issue's bound (5 s; measured 0.8 s on a busy two-core machine, so the bound is generous), in
    CPU time of this process (validation runs in it), so a loaded machine cannot fail it."""
    gps = '<gps name="g{}"><update_rate_hz>5</update_rate_hz></gps>\n'
    (demo_copy / "sensors.xml").write_text('<?xml version="1.0"?>\n<sear-sensors version="1">\n'
                                           + "".join(gps.format(i) for i in range(10_000)) + "</sear-sensors>\n")
    load_project(demo_copy / "demo.prj")  # the models are read (and cached) once, as by a first validation
    start = time.process_time()
    loaded = load_project(demo_copy / "demo.prj")
    elapsed = time.process_time() - start
    assert loaded.ok and len(loaded.robots[0].sensors) == 10_000
    assert elapsed <= 5.0, elapsed
