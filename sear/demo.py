"""Deterministic generation of the demo project's models (no downloads, no randomness between runs).

    python -m sear.demo DIR
    python -m sear.demo --diffbot DIR

writes the terrain (100 m x 100 m of gentle hills with a level area around the centre, coloured by
height), a small rover's body and four wheels in several common formats, and a tree. The hand-written
demo files (demo.prj, sensors.xml, demo_code.py) refer to these names. The package ships the output in
sear/data/demo (tests/test_demo.py fails when it differs): after a change here, run
`python -m sear.demo sear/data/demo`. With --diffbot: the differential-drive demo's floor, round body,
two driven wheels and a swivel caster's wheel, shipped in sear/data/diffbot (`python -m sear.demo --diffbot
sear/data/diffbot`; tests/test_diffbot.py checks them).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import numpy as np
import trimesh

from sear.models.meshfiles import make_tree

DEMO_MODEL_FILES = (
    "terrain.obj", "body.stl", "wheel_lf.obj", "wheel_rf.obj", "wheel_lr.ply", "wheel_rr.ply", "tree.obj",
)

TERRAIN_SIZE_M = 100.0
TERRAIN_STEP_M = 1.0
WHEEL_RADIUS_M = 0.1
WHEEL_WIDTH_M = 0.06

# Hills: (east m, north m, height m, radius m), placed beyond the level centre. Chosen, with the
# width of the ramp below, so no slope exceeds 10 degrees (the demo tests measure it: 9.7 degrees).
_HILLS = (
    (34.0, 28.0, 2.6, 14.0),
    (-34.0, 20.0, 2.5, 11.0),
    (-28.0, -34.0, 2.6, 14.0),
    (34.0, -30.0, -1.5, 9.0),   # a hollow
    (0.0, 46.0, 2.0, 9.0),
)
LEVEL_RADIUS_M = 20.0
"""Inside this distance of the centre the ground is exactly level (z = 0), so the robot starts level."""
RAMP_WIDTH_M = 28.0
"""Distance over which the hills rise from the level centre to their full height (smoothstep), m."""


def terrain_height(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Height of the demo terrain (m) at world points (m): the formula the mesh samples."""
    h = np.zeros(np.broadcast(x, y).shape)
    for cx, cy, amp, sigma in _HILLS:
        h = h + amp * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2.0 * sigma**2))
    r = np.hypot(x, y)
    t = np.clip((r - LEVEL_RADIUS_M) / RAMP_WIDTH_M, 0.0, 1.0)
    return h * t * t * (3.0 - 2.0 * t)


def make_terrain() -> trimesh.Trimesh:
    """A height grid mesh, x east and y north, centred on the origin, with per-vertex colours."""
    n = round(TERRAIN_SIZE_M / TERRAIN_STEP_M) + 1
    xs = np.linspace(-TERRAIN_SIZE_M / 2, TERRAIN_SIZE_M / 2, n)
    gx, gy = np.meshgrid(xs, xs, indexing="xy")
    gz = terrain_height(gx, gy)
    vertices = np.column_stack([gx.ravel(), gy.ravel(), gz.ravel()])
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    faces = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    # Grass green in the hollows to dry brown on the tops.
    t = np.clip((gz.ravel() + 1.5) / 4.5, 0.0, 1.0)[:, None]
    low, high = np.array([70, 140, 60]), np.array([150, 130, 85])
    colours = np.hstack([(low * (1 - t) + high * t).astype(np.uint8), np.full((n * n, 1), 255, np.uint8)])
    return trimesh.Trimesh(vertices, faces, vertex_colors=colours, process=False)


def make_body() -> trimesh.Trimesh:
    """Rover chassis centred on the origin: a 0.6 x 0.4 x 0.12 m hull with a sensor deck on top."""
    hull = trimesh.creation.box(extents=(0.6, 0.4, 0.12))
    deck = trimesh.creation.box(extents=(0.3, 0.3, 0.06))
    deck.apply_translation((-0.05, 0.0, 0.09))
    return cast(trimesh.Trimesh, trimesh.util.concatenate([hull, deck]))


def make_wheel() -> trimesh.Trimesh:
    """A wheel of radius 0.1 m and width 0.06 m, axle along y, centred on the origin."""
    wheel = trimesh.creation.cylinder(radius=WHEEL_RADIUS_M, height=WHEEL_WIDTH_M, sections=32)
    wheel.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0)))
    return wheel


def write_demo_models(folder: Path) -> None:
    """Write every file of DEMO_MODEL_FILES into `folder` (created if needed)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    make_terrain().export(folder / "terrain.obj", include_color=True)
    make_body().export(folder / "body.stl")
    wheel = make_wheel()
    for name in ("wheel_lf.obj", "wheel_rf.obj", "wheel_lr.ply", "wheel_rr.ply"):
        wheel.export(folder / name)
    make_tree().export(folder / "tree.obj")


DIFFBOT_MODEL_FILES = ("floor.obj", "diffbot_body.stl", "drive_wheel.obj", "swivel_caster.obj")
"""The differential-drive demo robot's models (sear/data/diffbot; its diffbot.prj, diffbot_code.py and
sensors.xml are written by hand)."""
DIFFBOT_WHEEL_RADIUS_M = 0.05
DIFFBOT_WHEEL_WIDTH_M = 0.025
DIFFBOT_CASTER_RADIUS_M = 0.025
DIFFBOT_CASTER_WIDTH_M = 0.015


def make_diffbot_body() -> trimesh.Trimesh:
    """A round two-motor robot's body centred on the origin: a disc 0.30 m across and 0.08 m tall, with
    a 0.06 x 0.10 x 0.03 m sensor block on its front edge (x forward) that shows which way it faces."""
    disc = trimesh.creation.cylinder(radius=0.15, height=0.08, sections=48)
    block = trimesh.creation.box(extents=(0.06, 0.10, 0.03))
    block.apply_translation((0.11, 0.0, 0.055))
    return cast(trimesh.Trimesh, trimesh.util.concatenate([disc, block]))


def make_drive_wheel() -> trimesh.Trimesh:
    """A driven wheel of radius 0.05 m and width 0.025 m, axle along y, centred on the origin."""
    wheel = trimesh.creation.cylinder(radius=DIFFBOT_WHEEL_RADIUS_M, height=DIFFBOT_WHEEL_WIDTH_M, sections=32)
    wheel.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0)))
    return wheel


def make_swivel_caster() -> trimesh.Trimesh:
    """A swivel caster's wheel of radius 0.025 m and width 0.015 m, axle along y, centred on the origin (the
    project's `caster_trail` makes it swivel; the model sets its radius and collision body)."""
    wheel = trimesh.creation.cylinder(radius=DIFFBOT_CASTER_RADIUS_M, height=DIFFBOT_CASTER_WIDTH_M, sections=24)
    wheel.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0)))
    return wheel


def make_floor() -> trimesh.Trimesh:
    """Level ground, 12 m x 12 m, centred on the origin at z = 0 (two triangles, facing up)."""
    h = 6.0
    vertices = np.array([[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]])
    return trimesh.Trimesh(vertices, [[0, 1, 2], [0, 2, 3]], process=False)


def write_diffbot_models(folder: Path) -> None:
    """Write every file of DIFFBOT_MODEL_FILES into `folder` (created if needed)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    make_floor().export(folder / "floor.obj")
    make_diffbot_body().export(folder / "diffbot_body.stl")
    make_drive_wheel().export(folder / "drive_wheel.obj")
    make_swivel_caster().export(folder / "swivel_caster.obj")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--diffbot":
        write_diffbot_models(Path(argv[1]))
        return 0
    if len(argv) != 1:
        print("usage: python -m sear.demo DIR  (the demo's models)\n"
              "       python -m sear.demo --diffbot DIR  (the differential-drive demo's models)", file=sys.stderr)
        return 2
    write_demo_models(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
