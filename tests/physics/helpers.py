"""Small worlds for physics tests: flat or inclined planes, the demo rover, pybullet-level props."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pybullet as p
import trimesh

from sear.demo import make_body, make_wheel
from sear.physics.world import World
from sear.project import WHEEL_IDS, Dynamics, Project

ROVER_WHEELS = {
    "left_front": (0.22, 0.25, -0.08), "right_front": (0.22, -0.25, -0.08),
    "left_rear": (-0.22, 0.25, -0.08), "right_rear": (-0.22, -0.25, -0.08),
}
ROVER = Dynamics(mass=20.0, engine_force=40.0, brake_force=20.0, suspension_stiffness=40.0,
                 suspension_compression=2.3, suspension_damping=2.4, friction_slip=1.0, max_steering=0.5)
G = 9.81


def plane_mesh(size: float = 200.0, slope_deg: float = 0.0) -> trimesh.Trimesh:
    """A square plane centred on the origin, rising towards +x at `slope_deg`."""
    h = size / 2
    xy = np.array([[-h, -h], [h, -h], [h, h], [-h, h]])
    z = xy[:, 0] * math.tan(math.radians(slope_deg))
    return trimesh.Trimesh(np.column_stack([xy, z]), [[0, 1, 2], [0, 2, 3]], process=False)


def rover_project(folder: Path, *, terrain: trimesh.Trimesh | None = None, **dynamics: float | str) -> Project:
    """A project with the demo rover on `terrain` (flat by default), files written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (terrain if terrain is not None else plane_mesh()).export(folder / "ground.obj")
    make_body().export(folder / "body.stl")
    make_wheel().export(folder / "wheel.obj")
    project = Project(name="test")
    project.terrain.file = folder / "ground.obj"
    project.body.file = folder / "body.stl"
    project.body.start_altitude = 0.02
    for wid in WHEEL_IDS:
        project.wheels[wid].file = folder / "wheel.obj"
        project.wheels[wid].position = ROVER_WHEELS[wid]
    project.dynamics = replace(ROVER, **dynamics)
    return project


def run(world: World, seconds: float) -> None:
    for _ in range(round(seconds / world.dt)):
        world.step()


def yaw(world: World) -> float:
    x, y, z, w = world.vehicles[0].state().orientation
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def static_box(world: World, centre: tuple[float, float, float], half: tuple[float, float, float]) -> int:
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=world.client)
    return p.createMultiBody(0, shape, basePosition=centre, physicsClientId=world.client)


def grid_mesh(n: int, half: float, height) -> trimesh.Trimesh:
    """An n x n vertex grid over [-half, half]² with z = height(x, y), faces looking up."""
    xs = np.linspace(-half, half, n)
    gx, gy = np.meshgrid(xs, xs)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    faces = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    return trimesh.Trimesh(np.column_stack([gx.ravel(), gy.ravel(), height(gx, gy).ravel()]), faces,
                           process=False)


# --- a DEM as the tests compute it (independently of sear.models.dem and the grid walk) ---------------------


def dem_cell(z: np.ndarray, pixel: float, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column and row (floats) of world points (m) on the DEM `z` centred on the origin, `pixel` m apart."""
    rows, cols = z.shape
    return x / pixel + (cols - 1) / 2.0, (rows - 1) / 2.0 - y / pixel


def dem_height(z: np.ndarray, pixel: float, x: float, y: float) -> float:
    """The DEM's triangulated surface (m) at (x, y): the triangle under the point, by its plane (the
    triangles the terrain's tiles and its grid walk use: (sw, se, ne) and (sw, ne, nw) of each cell)."""
    u, v = dem_cell(z, pixel, np.array([x]), np.array([y]))
    c, r = math.floor(u[0]), math.floor(v[0])
    a, b = u[0] - c, 1.0 - (v[0] - r)  # east, north within the cell
    sw, se, ne, nw = (float(z[r + 1, c]), float(z[r + 1, c + 1]), float(z[r, c + 1]), float(z[r, c]))
    if b <= a:  # (sw, se, ne)
        return sw + a * (se - sw) + b * (ne - se)
    return sw + b * (nw - sw) + a * (ne - nw)


def dem_cast(z: np.ndarray, pixel: float, start: np.ndarray, end: np.ndarray) -> float:
    """Fraction of the ray start -> end at its first hit on the DEM's triangles (1.0 for a miss), by testing
    every triangle of the cells its x/y box covers."""
    rows, cols = z.shape
    u, v = dem_cell(z, pixel, np.array([start[0], end[0]]), np.array([start[1], end[1]]))
    c0, c1 = max(math.floor(u.min()) - 1, 0), min(math.ceil(u.max()) + 1, cols - 1)
    r0, r1 = max(math.floor(v.min()) - 1, 0), min(math.ceil(v.max()) + 1, rows - 1)
    cs, rs = np.arange(c0, c1), np.arange(r0, r1)
    cc, rr = np.meshgrid(cs, rs)
    cc, rr = cc.ravel(), rr.ravel()

    def corner(r, c):
        return np.column_stack([(c - (cols - 1) / 2.0) * pixel, ((rows - 1) / 2.0 - r) * pixel,
                                z[r, c].astype(np.float64)])

    sw, se, ne, nw = corner(rr + 1, cc), corner(rr + 1, cc + 1), corner(rr, cc + 1), corner(rr, cc)
    a = np.concatenate([sw, sw])
    b = np.concatenate([se, ne])
    c = np.concatenate([ne, nw])
    d = end - start
    e1, e2 = b - a, c - a
    pv = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, pv)
    tv = start - a
    with np.errstate(divide="ignore", invalid="ignore"):
        uu = np.einsum("ij,ij->i", tv, pv) / det
        qv = np.cross(tv, e1)
        vv = (qv @ d) / det
        t = np.einsum("ij,ij->i", e2, qv) / det
    ok = (det != 0) & (uu >= 0) & (uu <= 1) & (vv >= 0) & (uu + vv <= 1) & (t >= 0) & (t <= 1)
    return float(t[ok].min()) if ok.any() else 1.0
