"""The built-in drive models (sear.drives) as the project format documents them, and the registry's rules.

The roles below are docs/project-format.md's (car: front slots steer, rear wheels driven; skid: every wheel
driven; differential: rear slots driven, front slots casters); the forces are checked by what they must add
up to, the Ackermann angles by the geometry they stand for."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sear.drives import registry
from sear.drives.base import DriveModel, WheelPlace
from sear.drives.car import CarDrive

MESH_SLOTS = [WheelPlace(left=left, steerable=front, front_slot=front)
              for front, left in ((True, True), (True, False), (False, True), (False, False))]
"""A mesh robot's four wheels in WHEEL_IDS order: left front, right front, left rear, right rear."""
URDF_SIX = [WheelPlace(left=left, steerable=False, front_slot=False) for left in (True,) * 3 + (False,) * 3]
"""A URDF robot with three wheels a side and no steering joints."""


@pytest.mark.parametrize(("name", "steered", "driven", "casters"), [
    ("car", (True, True, False, False), (False, False, True, True), (False,) * 4),
    ("skid", (False,) * 4, (True,) * 4, (False,) * 4),
    ("differential", (False,) * 4, (False, False, True, True), (True, True, False, False)),
])
def test_the_built_in_roles_on_a_mesh_robot(name, steered, driven, casters):
    model = registry.model(name)(MESH_SLOTS)
    assert (model.steered, model.driven, model.casters) == (steered, driven, casters)
    assert model.wheels_steer == any(steered)


@pytest.mark.parametrize("name", ["car", "skid", "differential"])
def test_a_urdf_robot_without_steering_joints_drives_every_wheel_by_its_sides(name):
    model = registry.model(name)(URDF_SIX)
    assert model.driven == (True,) * 6 and not any(model.casters) and not model.wheels_steer
    forces = model.wheel_forces(engine_force=0.0, sides=(3.0, -6.0), turn=0.0, full_force=9.0)
    assert forces == pytest.approx([1.0, 1.0, 1.0, -2.0, -2.0, -2.0])
    # Full left turn and no throttle: the full force moves from the left side to the right one.
    spin = model.wheel_forces(engine_force=0.0, sides=None, turn=1.0, full_force=9.0)
    assert spin == pytest.approx([-1.5, -1.5, -1.5, 1.5, 1.5, 1.5])


@pytest.mark.parametrize("name", ["car", "skid", "differential"])
def test_the_forces_add_up_to_what_was_asked(name):
    model = registry.model(name)(MESH_SLOTS)
    forces = model.wheel_forces(engine_force=40.0, sides=None, turn=0.0, full_force=40.0)
    assert sum(forces) == pytest.approx(40.0)
    assert all(f == 0.0 for f, driven in zip(forces, model.driven, strict=True) if not driven)
    sided = model.wheel_forces(engine_force=40.0, sides=(10.0, 30.0), turn=0.0, full_force=40.0)
    assert sum(f for f, w in zip(sided, MESH_SLOTS, strict=True) if w.left) == pytest.approx(10.0)
    assert sum(f for f, w in zip(sided, MESH_SLOTS, strict=True) if not w.left) == pytest.approx(30.0)


def test_the_car_points_both_front_wheels_at_one_centre_on_the_rear_axle_line():
    car = CarDrive(MESH_SLOTS)
    wheelbase, half_track, steering = 0.44, 0.25, 0.3
    left = car.steer_angle(steering, wheelbase, half_track)
    right = car.steer_angle(steering, wheelbase, -half_track)
    assert left > steering > right > 0  # turning left, the inner (left) wheel turns more
    # Each front wheel at (wheelbase, ±half_track) turns its axle line by its angle; both lines meet the
    # rear axle line (x = 0) at the same y: the turning centre.
    centres = [side + wheelbase / math.tan(angle) for side, angle in ((half_track, left), (-half_track, right))]
    assert centres[0] == pytest.approx(centres[1], rel=1e-12)
    assert car.steer_angle(1e-12, wheelbase, half_track) == 0.0
    assert car.steer_angle(steering, 0.0, half_track) == steering  # every wheel steers: no turning centre


class _Named(DriveModel):
    NAME = "tracked"
    LABEL = "Tracked"


def test_register_checks_the_name_label_and_clashes():
    with pytest.raises(ValueError, match="not a DriveModel subclass"):
        registry.register(object)  # type: ignore[arg-type]
    bad = type("Bad", (DriveModel,), {"NAME": "2 words", "LABEL": "x"})
    with pytest.raises(ValueError, match="must be a word"):
        registry.register(bad)
    clash = type("Clash", (DriveModel,), {"NAME": "car", "LABEL": "Another car"})
    with pytest.raises(ValueError, match="'car' is registered already"):
        registry.register(clash)
    registry.register(_Named)
    try:
        assert registry.names()[-1] == "tracked" and registry.model("tracked") is _Named
    finally:
        registry.unregister("tracked")
    registry.unregister("car")  # built-in: stays
    assert registry.names() == registry.builtin_names() == ("car", "skid", "differential")
    with pytest.raises(ValueError, match="unknown drive type 'tracked'; use one of: car, skid, differential"):
        registry.model("tracked")


def test_the_project_format_describes_every_built_in_model():
    page = (Path(__file__).resolve().parents[1] / "docs" / "project-format.md").read_text(encoding="utf-8")
    (row,) = [line for line in page.splitlines() if line.startswith("| `drive_type` |")]
    assert [name for name in registry.builtin_names() if f"`{name}`" not in row] == []
