"""URDF robots drive out of the box (issue 24 item 3), tested as a user goes: a new project, the URDF chosen
with Browse on the Robot Body Model tab, SEAR's proposal accepted, the project saved; then the saved file run
with the inputs the simulation window sends for the keys U, H and K (sear.gui.simwindow._drive_input), the
heading read from the simulated pose."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from sear.project import Project
from sear.runtime.simulation import Simulation
from sear.starter import create_new_project

pytestmark = pytest.mark.gl

DATA = Path(pybullet_data.getDataPath())


def _yaw(q) -> float:
    x, y, z, w = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _drive(prj: Path, throttle: float, steer: float, seconds: float = 5.0) -> tuple[float, float, Simulation]:
    """Distance moved along the start heading (m) and the heading change (rad, unwrapped, positive left) in
    `seconds` with the keys' inputs held, after 0.5 s settling; the closed simulation for its facts."""
    simulation = Simulation(Project.load(prj))
    try:
        simulation.set_manual_input(0.0, 0.0, False)
        for _ in range(round(0.5 * simulation.physics_hz)):
            simulation.tick()
        start = simulation.world.vehicles[0].state()
        heading = _yaw(start.orientation)
        turned = 0.0
        simulation.set_manual_input(throttle, steer, False)  # what the window sends while the keys are held
        for _ in range(round(seconds * 10)):
            for _ in range(round(simulation.physics_hz / 10)):
                simulation.tick()
            now = _yaw(simulation.world.vehicles[0].state().orientation)
            turned += (now - heading + math.pi) % (2 * math.pi) - math.pi
            heading = now
        end = simulation.world.vehicles[0].state()
        facts = (_pybullet_mass(simulation), _pybullet_wheel_friction(simulation))
    finally:
        simulation.close()
    direction = np.array([math.cos(_yaw(start.orientation)), math.sin(_yaw(start.orientation))])
    return float((end.position - start.position)[:2] @ direction), turned, facts  # type: ignore[return-value]


def _pybullet_mass(simulation: Simulation) -> float:
    """kg: the robot's mass as pybullet has it, link by link."""
    vehicle, client = simulation.world.vehicles[0], simulation.world.client
    links = range(-1, p.getNumJoints(vehicle.body_id, physicsClientId=client))
    return sum(p.getDynamicsInfo(vehicle.body_id, i, physicsClientId=client)[0] for i in links)


def _pybullet_wheel_friction(simulation: Simulation) -> float:
    """The wheels' friction coefficient with the terrain as pybullet combines it (the product)."""
    vehicle, world = simulation.world.vehicles[0], simulation.world
    wheel = p.getDynamicsInfo(vehicle.body_id, vehicle._wheel_joints[0], physicsClientId=world.client)[1]
    return wheel * p.getDynamicsInfo(world.terrain_ids[0], -1, physicsClientId=world.client)[1]


@pytest.mark.parametrize("urdf", ["husky/husky.urdf", "racecar/racecar.urdf"])
def test_a_urdf_chosen_in_the_window_drives_forward_and_turns_both_ways(window, answers, tmp_path, urdf):
    w = window
    prj = tmp_path / "robot" / "robot.prj"
    create_new_project(prj)
    assert w.open_project(prj)
    w.tabs.setCurrentIndex(1)
    answers.open_path = str(DATA / urdf)
    w.body_tab.body_file.browse.click()  # the file dialog's path, as a user chooses the URDF
    assert w.project.robots[0].body.file == DATA / urdf
    w.tabs.setCurrentIndex(3)  # Vehicle Dynamics: the URDF's mass and friction, read-only
    dynamics_tab = w.dynamics_tab
    mass_field = dynamics_tab.numbers[("dynamics", "mass")]
    friction_field = dynamics_tab.numbers[("dynamics", "friction_slip")]
    assert dynamics_tab.urdf_box.isVisibleTo(w) and not mass_field.isEnabled() and not friction_field.isEnabled()
    assert w.save()
    # U for 3 s: the Husky, with no damping but its own, is at 7.6 m/s by then (5 s: 10.6 m/s, 29 m over
    # the new project's grid of triangles, whose shared edges kick a wheel sideways: 19°).
    forward, turned_ahead, (mass, friction) = _drive(prj, 1.0, 0.0, seconds=3.0)
    assert mass_field.value() == pytest.approx(mass, abs=1e-3)  # the mass the run uses
    assert friction_field.value() == pytest.approx(friction, abs=1e-3)
    assert forward >= 1.0
    assert abs(turned_ahead) < math.radians(10)  # straight ahead (husky 0.5°, racecar 0.1° when measured)
    car = w.project.robots[0].dynamics.drive_type == "car"
    throttle = 1.0 if car else 0.0  # a car turns only while it rolls (U+H); a skid steer spins on the spot (H)
    _, left, _ = _drive(prj, throttle, 1.0)  # H
    _, right, _ = _drive(prj, throttle, -1.0)  # K
    assert left >= math.radians(45)
    assert right <= -math.radians(45)


def test_r2d2_chosen_in_the_window_is_refused_naming_its_wheel_joints_and_axis(window, answers, tmp_path):
    w = window
    prj = tmp_path / "robot" / "robot.prj"
    create_new_project(prj)
    assert w.open_project(prj)
    w.tabs.setCurrentIndex(1)
    answers.open_path = str(DATA / "r2d2.urdf")
    w.body_tab.body_file.browse.click()
    drive_before = (w.project.robots[0].dynamics.drive_type, w.project.robots[0].dynamics.engine_force)
    assert drive_before == ("car", 40.0)  # nothing proposed: the new project's drive is left as it was
    text = w.body_tab.urdf_panel.wheel_note.text()
    assert "right_front_wheel_joint" in text and "(1.00 0.00 0.00)" in text
    from sear.loading import load_project

    problems = [str(problem) for problem in load_project(w.project).problems]
    assert any("right_front_wheel_joint" in line and "(1.00 0.00 0.00)" in line for line in problems)


def test_choosing_a_urdf_and_its_drive_proposal_is_one_undo_step(window, answers, tmp_path):
    w = window
    prj = tmp_path / "robot" / "robot.prj"
    create_new_project(prj)
    assert w.open_project(prj)
    mass_field = w.dynamics_tab.numbers[("dynamics", "mass")]
    assert mass_field.isEnabled() and mass_field.value() == 20.0  # control: the new project's mesh robot
    w.tabs.setCurrentIndex(1)
    answers.open_path = str(DATA / "husky" / "husky.urdf")
    w.body_tab.body_file.browse.click()
    assert w.project.robots[0].dynamics.drive_type == "skid" and not mass_field.isEnabled()
    w.history.undo()
    robot = w.project.robots[0]
    assert robot.body.file == prj.parent / "body.obj" and (robot.dynamics.drive_type, robot.dynamics.engine_force) \
        == ("car", 40.0)
    assert mass_field.isEnabled() and mass_field.value() == 20.0  # the project's own mass again


def test_use_sears_proposal_sets_the_drive_of_a_project_made_before(window, answers, tmp_path):
    """A project whose URDF body kept the new project's Car and 40 N (made before SEAR proposed drives): the
    Dynamics tab offers the proposal, and `sear validate`'s warning goes once it is used."""
    from sear.loading import load_project

    prj = tmp_path / "robot" / "robot.prj"
    project = create_new_project(prj)
    project.robots[0].body.file = DATA / "husky" / "husky.urdf"
    project.save(prj)
    assert load_project(prj).drive_warnings  # Car without steering joints, 40 N
    w = window
    assert w.open_project(prj)
    w.tabs.setCurrentIndex(3)
    button = w.dynamics_tab.proposal_button
    assert button.isEnabled() and "SEAR's proposal" in w.dynamics_tab.urdf_note.text()
    button.click()
    assert w.project.robots[0].dynamics.drive_type == "skid" and w.dynamics_tab.drive_type.currentData() == "skid"
    assert not button.isEnabled()  # nothing left to propose
    assert w.save()
    assert load_project(prj).drive_warnings == []
