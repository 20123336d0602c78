"""docs/adding-a-drive-model.md is true: its code registers a model that a project may name, which steers
the front wheels and drives all four."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from sear.drives import registry
from sear.models.loaded import load_models
from sear.physics.world import World
from sear.project import Project

from .physics.helpers import ROVER, rover_project, run

PAGE = Path(__file__).resolve().parents[1] / "docs" / "adding-a-drive-model.md"


def _code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


@pytest.fixture
def page_namespace():
    module = types.ModuleType("adding_a_drive_model_doc")
    assert "awd" not in registry.names()
    sys.modules[module.__name__] = module
    try:
        exec(compile(_code(), str(PAGE), "exec"), module.__dict__)
        yield module.__dict__
    finally:
        registry.unregister("awd")
        del sys.modules[module.__name__]


def test_the_page_example_is_a_word_a_project_may_name(page_namespace, tmp_path):
    assert registry.model("awd") is page_namespace["AllWheelDriveCar"]
    project = Project(name="awd")
    project.dynamics.drive_type = "awd"
    assert Project.load(project.save(tmp_path / "awd.prj")).dynamics.drive_type == "awd"


@pytest.mark.parametrize("drive_type", ["awd", "car"])
def test_the_page_example_steers_the_front_wheels_and_drives_all_four(page_namespace, tmp_path, drive_type):
    c_rr = 0.1
    project = rover_project(tmp_path, drive_type=drive_type, rolling_resistance=c_rr)
    world = World(project, load_models(project))
    vehicle = world.vehicles[0]
    try:
        run(world, 0.5)  # settled on its wheels
        vehicle.steer(0.3)
        run(world, 1.0 / 240)
        steering = {wid: s.steering for wid, s in vehicle.wheel_states().items()}
        assert steering["left_front"] > 0.3 > steering["right_front"] > 0.0
        assert steering["left_rear"] == steering["right_rear"] == 0.0
        vehicle.steer(0.0)
        vehicle.accelerate(ROVER.engine_force)
        run(world, 0.5)
        v0, t0 = vehicle.state().linear_velocity.copy(), world.time
        run(world, 0.5)
        v1, t1 = vehicle.state().linear_velocity.copy(), world.time
    finally:
        world.close()
    acceleration = float(np.linalg.norm(v1 - v0)) / (t1 - t0)
    if drive_type == "awd":
        # Newton: every wheel driven (driven wheels have no rolling resistance): the engine force is all
        # that pushes.
        assert acceleration == pytest.approx(ROVER.engine_force / ROVER.mass, rel=0.01)
    else:
        # Control: a car's two free front wheels hold it back with rolling resistance c_rr times their load,
        # at least a quarter of the weight.
        assert acceleration < (ROVER.engine_force - c_rr * ROVER.mass * 9.81 / 4) / ROVER.mass
