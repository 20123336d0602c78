"""The world's edge: a robot that drives over the terrain's edge falls, and is put back at its start pose
(with a console message) once it is FALL_DEPTH below the terrain's lowest point."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sear.physics.world import FALL_DEPTH
from sear.runtime.simulation import Simulation
from tests.physics.helpers import plane_mesh, rover_project

SIZE = 16.0
"""Edge length of the square test terrain, m: its edges lie 8 m from the start at its centre."""


def _drive(world, seconds: float) -> list[np.ndarray]:
    """Full throttle straight ahead for `seconds`; the body's positions after every step."""
    positions = []
    for _ in range(round(seconds / world.dt)):
        world.vehicles[0].accelerate(world.project.dynamics.engine_force)
        world.step()
        positions.append(world.vehicles[0].pose()[0])
    return positions


def test_driving_over_the_edge_the_robot_falls_and_is_put_back_at_its_start(tmp_path, make_world):
    world = make_world(rover_project(tmp_path, terrain=plane_mesh(SIZE)))
    start = world.vehicles[0].pose()[0].copy()
    path = np.array(_drive(world, 9.0))
    # Over the edge (|x| beyond half the terrain) and down: the robot really left the terrain.
    assert np.abs(path[:, :2]).max() > SIZE / 2
    assert path[:, 2].min() < -1.0
    # ... but never further down than the edge lets it (z = 0 plane: lowest point 0, one step of fall
    # at most below the line), and it is back near its start afterwards.
    assert path[:, 2].min() > -FALL_DEPTH - 0.5
    assert len(world.falls) >= 1
    t, x, y = world.falls[0]
    assert max(abs(x), abs(y)) == pytest.approx(SIZE / 2)  # the point of the edge it drove over
    assert abs(y) < 0.5  # straight ahead (east) from the centre
    after = path[round(t / world.dt)]  # the step after the fall
    assert np.linalg.norm(after[:2] - start[:2]) < 0.5


def test_inside_the_terrain_the_edge_changes_nothing(tmp_path, make_world):
    """Positive control: a drive that stays on the terrain never falls, and follows bit for bit the path
    of the same drive in a world whose edge is switched off (the check only reads the pose)."""
    with_edge = make_world(rover_project(tmp_path, terrain=plane_mesh(SIZE)))
    without_edge = make_world(rover_project(tmp_path, terrain=plane_mesh(SIZE)))
    without_edge.fall_height = -math.inf
    path = np.array(_drive(with_edge, 2.5))
    assert np.abs(path[:, :2]).max() < SIZE / 2 - 1.0  # still well inside the terrain
    assert with_edge.falls == []
    assert np.array_equal(path, np.array(_drive(without_edge, 2.5)))


def test_a_fall_is_reported_in_the_console(tmp_path):
    project = rover_project(tmp_path, terrain=plane_mesh(SIZE))
    shown: list[str] = []
    simulation = Simulation(project, output=shown.append)
    try:
        while not simulation.world.falls and simulation.world.time < 12.0:
            simulation.set_manual_input(1.0, 0.0, False)
            simulation.tick()
        assert simulation.world.falls
        messages = [text for text in shown if "fell off the edge of the terrain" in text]
        assert len(messages) == 1
        assert "start pose" in messages[0]
        assert np.linalg.norm(simulation.state.position[:2] - simulation.world.start_poses[0][0][:2]) < 0.5
    finally:
        simulation.close()


def test_the_documented_edge_is_the_one_simulated():
    text = (Path(__file__).resolve().parents[2] / "docs" / "simulation-window.md").read_text(encoding="utf-8")
    assert f"**{FALL_DEPTH:g} m\nbelow the terrain's lowest point**" in text
