"""URDF robots in the simulation: the Clearpath Husky and the MIT racecar shipped in pybullet_data, driven
by the keyboard's path (Simulation.set_manual_input) and seeing a wall with a LIDAR on one of their links.

Expected figures come from the URDF files' own numbers and Newton's law, not from the code under test."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pybullet_data
import pytest

from sear.errors import ProjectError
from sear.project import Project
from sear.runtime.simulation import Simulation
from sear.sensors.files import load_sensors, save_sensors
from sear.sensors.lidar import LidarConfig
from tests.physics.helpers import plane_mesh

DATA = Path(pybullet_data.getDataPath())
HUSKY = DATA / "husky" / "husky.urdf"
RACECAR = DATA / "racecar" / "racecar.urdf"
HUSKY_MASS = 33.455 + 4 * 2.637 + 6 * 1.0
"""kg: base_link and the four wheels of husky.urdf, and 1 kg for each of its six links without <inertial>
(base_footprint, imu_link, top_plate_link, user_rail_link and the two bumpers: pybullet's default)."""
RACECAR_MASS = 0.1 + 0.1 + 4.0 + 4 * 0.34055 + 2 * 0.1 + 0.13 + 3 * 1e-5
"""kg: every <mass> of racecar.urdf."""


def urdf_project(folder: Path, urdf: Path, drive_type: str, engine_force: float) -> Project:
    folder.mkdir(parents=True, exist_ok=True)
    plane_mesh(60.0).export(folder / "ground.obj")
    project = Project(name="urdf")
    project.terrain.file = folder / "ground.obj"
    project.body.file = urdf
    project.body.start_altitude = 0.01
    project.dynamics.drive_type = drive_type
    project.dynamics.engine_force = engine_force
    project.dynamics.brake_force = 50.0
    project.path = folder / "urdf.prj"
    return project


def drive(simulation: Simulation, seconds: float, throttle: float, steer: float = 0.0) -> None:
    simulation.set_manual_input(throttle, steer, False)
    for _ in range(round(seconds * simulation.physics_hz)):
        simulation.tick()


def yaw_of(q: np.ndarray) -> float:
    x, y, z, w = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


@pytest.mark.parametrize(("urdf", "drive_type", "force", "mass"), [
    (HUSKY, "skid", 100.0, HUSKY_MASS), (RACECAR, "car", 10.0, RACECAR_MASS)])
def test_keyboard_drives_urdf_robot_forward(tmp_path: Path, urdf: Path, drive_type: str, force: float,
                                            mass: float) -> None:
    simulation = Simulation(urdf_project(tmp_path, urdf, drive_type, force))
    try:
        drive(simulation, 0.5, 0.0)  # settle on the wheels
        start = simulation.world.vehicles[0].state()
        drive(simulation, 5.0, 1.0)
        end = simulation.world.vehicles[0].state()
    finally:
        simulation.close()
    moved = end.position - start.position
    assert moved[0] >= 2.0  # the acceptance line: at least 2 m forward in 5 s
    # Newton: the motors push the ground with at most `force` in all, so from rest the robot covers at
    # most F/m·t²/2 in t.
    assert moved[0] <= force / mass * 5.0**2 / 2 * 1.01
    assert abs(moved[1]) < 0.05 * moved[0]
    assert abs(yaw_of(end.orientation)) < math.radians(3)


HUSKY_BREAKS_LOOSE = 1.0 * 0.5 * HUSKY_MASS * 9.81 / math.sqrt(1 + (0.2854 / 0.256) ** 2)
"""N: the side forces' total that turns the Husky on the spot: each wheel holds its share F/4 of the push and
the side force F·b/(4a) that keeps it from turning within its grip μ·m·g/4 (husky.urdf: wheels at x ±0.256 m,
y ±0.2854 m, lateral_friction 1.0 on the ground's 0.5), so it breaks loose once F·√(1 + (b/a)²) > μ·m·g."""


def spin(tmp_path: Path, force: float, seconds: float) -> tuple[float, float]:
    """The Husky skid-steered with full steering and no throttle for `seconds`: the heading change (rad,
    unwrapped, positive left) and how far its root link moved, m."""
    simulation = Simulation(urdf_project(tmp_path, HUSKY, "skid", force))
    try:
        drive(simulation, 0.5, 0.0)
        start = simulation.world.vehicles[0].state()
        heading, turned = yaw_of(start.orientation), 0.0
        for _ in range(round(seconds * 10)):
            drive(simulation, 0.1, 0.0, steer=1.0)
            now = yaw_of(simulation.world.vehicles[0].state().orientation)
            turned += (now - heading + math.pi) % (2 * math.pi) - math.pi
            heading = now
        end = simulation.world.vehicles[0].state()
    finally:
        simulation.close()
    return turned, float(np.linalg.norm((end.position - start.position)[:2]))


def test_skid_steering_turns_husky_in_place(tmp_path: Path) -> None:
    """Full steering without throttle drives the sides against each other: above the force that breaks it
    loose the Husky spins left, staying near where it was; below it, it does not turn (the control). Near:
    pushed against each other, its sides creep it backwards about 0.8 m in 5 s whether it turns or not (it
    did before the wheels' slip was limited too; 1.6 m since pybullet's own damping of 0.04/s, which no
    URDF asks for, is taken off URDF robots), so the bound is 2 of its 1 m lengths."""
    turned, moved = spin(tmp_path / "strong", 1.25 * HUSKY_BREAKS_LOOSE, 5.0)
    assert turned > math.radians(45) and moved < 2.0
    held, _ = spin(tmp_path / "weak", 0.7 * HUSKY_BREAKS_LOOSE, 5.0)
    assert abs(held) < math.radians(5)


def test_racecar_steers_on_its_hinges_to_the_ackermann_radius(tmp_path: Path) -> None:
    """At low speed a car with Ackermann steering turns about a point on its rear axle line, wheelbase /
    tan(δ) from the centre line; racecar.urdf: wheelbase 0.325 m (front hinges at x 0.325, rear axle at 0)."""
    project = urdf_project(tmp_path, RACECAR, "car", 2.0)
    project.dynamics.max_steering = 0.3
    simulation = Simulation(project)
    try:
        drive(simulation, 0.5, 0.0)
        drive(simulation, 6.0, 0.5, steer=1.0)
        state = simulation.world.vehicles[0].state()
    finally:
        simulation.close()
    speed = float(np.linalg.norm(state.linear_velocity[:2]))
    # The root frame (base_link) lies on the rear axle: it runs on the radius itself.
    radius = speed / state.angular_velocity[2]
    assert radius == pytest.approx(0.325 / math.tan(0.3), rel=0.1)


@pytest.mark.parametrize(("urdf", "link", "link_x", "drive_type"), [
    # racecar.urdf: hokuyo_joint puts 'laser' 0.265 m ahead of chassis, which base_link_joint puts at x 0.
    (RACECAR, "laser", 0.265, "car"),
    # husky.urdf has no laser link: its accessories' rail, user_rail_link, 0.272 m ahead of base_link.
    (HUSKY, "user_rail_link", 0.272, "skid"),
])
def test_lidar_on_a_link_reads_a_wall_3_m_ahead(tmp_path: Path, urdf: Path, link: str, link_x: float,
                                                drive_type: str) -> None:
    lidar = LidarConfig(name="scan", link=link, spread_deg=2.0, angle_step_deg=1.0, resolution_mm=1.0,
                        max_range_m=10.0, update_rate_hz=60.0)
    sensors = save_sensors(tmp_path / "sensors.xml", [lidar])
    assert f"<link>{link}</link>" in sensors.read_text()
    configs = load_sensors(sensors)
    assert configs[0].link == link
    simulation = Simulation(urdf_project(tmp_path, urdf, drive_type, 10.0), sensor_configs=configs)
    try:
        drive(simulation, 0.5, 0.0)
        root = simulation.world.vehicles[0].state().position
        wall_face = root[0] + link_x + 3.0
        simulation.world.add_wall(wall_face + 0.1, -3.0, wall_face + 0.1, 3.0, height=2.0, thickness=0.2)
        drive(simulation, 0.1, 0.0)
        scan = simulation.sensors.read("scan")
    finally:
        simulation.close()
    assert scan.shape == (2,)  # beams at -1° and 0°
    assert scan[1] == pytest.approx(3.0, abs=0.02)
    assert scan[0] == pytest.approx(3.0 / math.cos(math.radians(1.0)), abs=0.02)


def test_sensor_on_a_missing_link_is_refused_by_name(tmp_path: Path) -> None:
    lidar = LidarConfig(name="scan", link="lazer")
    with pytest.raises(ProjectError) as error:
        Simulation(urdf_project(tmp_path, RACECAR, "car", 10.0), sensor_configs=[lidar])
    assert "sensor 'scan'" in error.value.message and "no link 'lazer'" in error.value.message
    assert "laser" in error.value.message  # the links are listed


def test_side_forces_drive_a_urdf_robot_as_sim_drive_asks(tmp_path: Path) -> None:
    """vehicle.drive(left, right) (what `sim.drive` calls): equal sides go straight, a right side stronger by
    more than the force that breaks the Husky loose (HUSKY_BREAKS_LOOSE, 164 N) turns left."""
    simulation = Simulation(urdf_project(tmp_path, HUSKY, "skid", 100.0))
    try:
        vehicle = simulation.world.vehicles[0]
        drive(simulation, 0.5, 0.0)
        start = vehicle.state()
        vehicle.drive(50.0, 50.0)
        drive_steps = round(2.0 * simulation.physics_hz)
        for _ in range(drive_steps):
            simulation.tick()
        straight = vehicle.state()
        vehicle.drive(20.0, 220.0)
        for _ in range(drive_steps):
            simulation.tick()
        turned = vehicle.state()
    finally:
        simulation.close()
    moved = straight.position - start.position
    assert moved[0] > 0.5 and abs(moved[1]) < 0.05 * moved[0]
    assert abs(yaw_of(straight.orientation)) < math.radians(2)
    assert yaw_of(turned.orientation) - yaw_of(straight.orientation) > math.radians(5)


def test_a_gripper_on_a_urdf_robot_is_refused_by_name(tmp_path: Path) -> None:
    """The gripper accessory is built on a mesh robot's chassis; on a URDF robot it is one clear message
    naming the field, and the same project without the gripper runs (the positive control)."""
    from sear.project import Gripper

    project = urdf_project(tmp_path / "p", HUSKY, "skid", 100.0)
    project.body.gripper = Gripper()
    with pytest.raises(ProjectError) as caught:
        Simulation(project)
    assert caught.value.field == "body.gripper" and "URDF" in str(caught.value)
    project.body.gripper = None
    simulation = Simulation(project)
    try:
        simulation.run(0.1)
        assert simulation.world.time > 0.09
    finally:
        simulation.close()
