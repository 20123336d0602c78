"""Several mesh vehicles in one world step their tyres in one batch (sear.physics.vehicle.WheelBatch): one
call of the compiled `wheel_rays_many` and `solve_many` per step for all of them. Checked against the same
world stepped vehicle by vehicle (each its own kernel calls, the rays still in one batch): every robot's
position, orientation and velocities after two simulated seconds of driving, turning and braking on bumpy
ground agree to 1e-9 (the arithmetic is the same kernels' in the same order)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pybullet as p
import pytest
import trimesh

from sear.models.loaded import load_models
from sear.physics import tyre
from sear.physics.world import World
from tests.physics.helpers import rover_project


def bumpy_ground() -> trimesh.Trimesh:
    """A 40 m square of gentle bumps (0.1 m high, 3 m apart), so that the wheels' loads differ."""
    xs = np.linspace(-20.0, 20.0, 81)
    gx, gy = np.meshgrid(xs, xs)
    gz = 0.1 * np.sin(gx * 2.0) * np.cos(gy * 2.0)
    vertices = np.column_stack([gx.ravel(), gy.ravel(), gz.ravel()])
    n = len(xs)
    faces = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j, (i + 1) * n + j + 1
            faces += [(a, b, d), (a, d, c)]
    return trimesh.Trimesh(vertices, np.array(faces), process=False)


def run(folder: Path, batched: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, bool]:
    """Three rovers driven differently for 2 s; their states, and whether the batch ran."""
    project = rover_project(folder, terrain=bumpy_ground())
    project.body.start_altitude = 0.3
    for index in (1, 2):
        robot = copy.deepcopy(project.robots[0])
        robot.name = f"r{index}"
        robot.body.start_east = 3.0 * index
        project.add_robot(robot)
    with monkeypatch.context() as patch:
        if not batched:
            patch.setattr(tyre, "batch_kernels", lambda: None)
        world = World(project, load_models(project))
        try:
            for step in range(480):
                for index, vehicle in enumerate(world.vehicles):
                    vehicle.accelerate(100.0 * (index + 1) if step < 360 else 0.0)
                    vehicle.steer(0.3 * (index - 1))
                    vehicle.brake(200.0 if step >= 360 and index == 2 else 0.0)
                world.step()
            states = []
            for vehicle in world.vehicles:
                pos, orn = p.getBasePositionAndOrientation(vehicle.body_id, physicsClientId=world.client)
                lin, ang = p.getBaseVelocity(vehicle.body_id, physicsClientId=world.client)
                angles = vehicle.state().wheel_angles.values()  # read before the WheelStates are filled
                wheels = vehicle.wheel_states().values()
                states.append([*pos, *orn, *lin, *ang, *angles, *(w.rotation for w in wheels),
                               *(w.suspension_length for w in wheels), *(w.suspension_force * 1e-3 for w in wheels),
                               *(float(w.in_contact) for w in wheels)])
            return np.array(states), world._wheel_batch is not None
        finally:
            world.close()


def test_batched_tyres_equal_the_per_vehicle_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tyre.kernels()  # the ahead-of-time kernels where they are built
    if tyre.batch_kernels() is None:
        pytest.skip("no compiled tyre kernels in this install (the batch needs them)")
    alone, used = run(tmp_path / "alone", False, monkeypatch)
    assert not used
    together, used = run(tmp_path / "together", True, monkeypatch)
    assert used
    # Every robot drove off (a positive control: equal because stepped alike, not because at rest).
    starts = np.array([[0.0, 0.0], [3.0, 0.0], [6.0, 0.0]])
    assert np.all(np.linalg.norm(together[:, :2] - starts, axis=1) > 0.5)
    np.testing.assert_allclose(together, alone, rtol=0.0, atol=1e-9)
