"""The example programs in examples/ run headless and do what docs/examples.md says, checked against truth
the test works out itself: the walls' true extents from the physics world, the robot's true path from
the log, distances from geometry.

Each runs the example's own project, user code and sensors file unchanged, for a short stretch of
simulated time (a few seconds of wall time each)."""

from __future__ import annotations

import csv
import math
import runpy
from pathlib import Path

import numpy as np
import pybullet as p
import pytest
from scipy import ndimage
from scipy.spatial import cKDTree

from sear.loading import load_project
from sear.runtime.logs import load_arrays
from sear.runtime.sim import GridImage
from sear.runtime.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


class Run:
    """What a headless run of an example left: the log's rows, its arrays, the obstacles' true
    footprints (x0, y0, x1, y1 m, from pybullet's bounding boxes), the grids shown, the output."""

    def __init__(self, rows: list[dict[str, float]], arrays: dict[str, np.ndarray],
                 boxes: list[tuple[float, float, float, float]], grids: dict[str, GridImage], output: str) -> None:
        self.rows, self.arrays, self.boxes, self.grids, self.output = rows, arrays, boxes, grids, output

    def column(self, name: str) -> np.ndarray:
        return np.array([row[name] for row in self.rows])


def run_example(tmp_path: Path, project: str, seconds: float, *, seed: int = 0) -> Run:
    loaded = load_project(EXAMPLES / project)
    assert loaded.ok, loaded.problems
    out: list[str] = []
    log = tmp_path / "run.csv"
    simulation = Simulation(loaded, seed=seed, log_path=log, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(seconds)
        assert simulation.user_error is None, str(simulation.user_error)
        world = simulation.world
        boxes = []
        for obstacle in world.obstacles:
            if not obstacle.dynamic:
                (x0, y0, _z0), (x1, y1, _z1) = p.getAABB(obstacle.body_id, physicsClientId=world.client)
                boxes.append((x0, y0, x1, y1))
        grids = dict(simulation.grids)
    finally:
        simulation.close()
    with open(log, newline="", encoding="utf-8") as fh:
        rows = [{k: float(v) if v else math.nan for k, v in row.items()} for row in csv.DictReader(fh)]
    assert rows
    return Run(rows, load_arrays(log), boxes, grids, "".join(out))


# --- occupancy-grid mapping ---------------------------------------------------------------------------------

RASTER = 0.05
"""m: the fine raster the true wall surfaces are worked out on."""


def true_surfaces(boxes, start: tuple[float, float], lo=(-8.0, -8.0), hi=(8.0, 8.0)) -> np.ndarray:
    """Points (m) on every obstacle surface the robot can see from `start`: raster cells inside an
    obstacle's footprint that touch the free space connected to the start (the outer faces of the room's
    walls and the inside of a wall are not seen)."""
    xs = np.arange(lo[0], hi[0], RASTER) + RASTER / 2
    ys = np.arange(lo[1], hi[1], RASTER) + RASTER / 2
    gx, gy = np.meshgrid(xs, ys)
    solid = np.zeros(gx.shape, dtype=bool)
    for x0, y0, x1, y1 in boxes:
        solid |= (gx >= x0) & (gx <= x1) & (gy >= y0) & (gy <= y1)
    labels, _count = ndimage.label(~solid)
    inside = labels == labels[int((start[1] - lo[1]) / RASTER), int((start[0] - lo[0]) / RASTER)]
    surface = solid & ndimage.binary_dilation(inside)
    return np.column_stack([gx[surface], gy[surface]])


def cell_centres(grid: GridImage, mask: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(mask)
    return np.column_stack([grid.x + (cols + 0.5) * grid.cell, grid.y + (rows + 0.5) * grid.cell])


def map_scores(grid: GridImage, surfaces: np.ndarray, path: np.ndarray, near: float = 0.2) -> dict[str, float]:
    """walls: the share of true surface points with a cell marked occupied (P > 0.5) within `near` m;
    free: the share of the cells within `near` m of the robot's path marked free (P < 0.5; unknown is
    not free); precision: the share of occupied cells within `near` m of a true surface."""
    values = grid.values
    occupied = cell_centres(grid, values > 0.5)
    all_cells = cell_centres(grid, np.ones(values.shape, dtype=bool))
    passed = cKDTree(path).query(all_cells)[0] <= near
    free = (values < 0.5).ravel()[passed.ravel()]
    if not len(occupied):
        return {"walls": 0.0, "free": float(free.mean()), "precision": 0.0, "passed": float(passed.sum())}
    walls = cKDTree(occupied).query(surfaces)[0] <= near
    precision = cKDTree(surfaces).query(occupied)[0] <= near
    return {"walls": float(walls.mean()), "free": float(free.mean()), "precision": float(precision.mean()),
            "passed": float(passed.sum())}


def test_occupancy_grid_mapping_matches_the_true_walls(tmp_path):
    run = run_example(tmp_path, "occupancy_grid/occupancy_grid.prj", 24.0)
    grid = run.grids["occupancy"]
    assert grid.cell == pytest.approx(0.1) and grid.time > 23.0
    x, y = run.column("truth.x"), run.column("truth.y")
    # It drove the whole loop: all four sides of the route (x and y both spanned about 5 and 3 m).
    assert np.ptp(x) > 4.5 and np.ptp(y) > 2.8
    surfaces = true_surfaces(run.boxes, (x[0], y[0]))
    assert len(surfaces) > 500 and len(run.boxes) == 6  # four walls, the spur, the pillar
    path = np.column_stack([x, y])
    scores = map_scores(grid, surfaces, path)
    print(scores)
    assert scores["passed"] > 300
    assert scores["walls"] >= 0.90
    assert scores["free"] >= 0.95
    assert scores["precision"] >= 0.90
    # Negative controls: the same checks refuse a map 0.4 m off, a blank map and an all-occupied one.
    shifted = grid._replace(x=grid.x + 0.4)
    assert map_scores(shifted, surfaces, path)["walls"] < 0.9
    blank = grid._replace(values=np.full_like(grid.values, np.nan))
    assert map_scores(blank, surfaces, path)["walls"] == 0.0 and map_scores(blank, surfaces, path)["free"] == 0.0
    full = grid._replace(values=np.ones_like(grid.values))
    assert map_scores(full, surfaces, path)["free"] == 0.0 and map_scores(full, surfaces, path)["precision"] < 0.5


# --- the 32-beam range map ----------------------------------------------------------------------------------

def ray_box_distances(origins: np.ndarray, angles: np.ndarray, boxes) -> np.ndarray:
    """Distance (m) along each 2-D ray from `origins` ((N, 2), or one (2,) for all) at `angles` (N,
    rad) to the nearest box footprint (x0, y0, x1, y1), inf where it hits none: the slab method."""
    origins = np.broadcast_to(np.asarray(origins, dtype=float), (len(angles), 2))
    d = np.column_stack([np.cos(angles), np.sin(angles)])
    best = np.full(len(angles), np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for x0, y0, x1, y1 in boxes:
            t1 = (np.array([x0, y0]) - origins) / d
            t2 = (np.array([x1, y1]) - origins) / d
            near = np.nanmax(np.minimum(t1, t2), axis=1)
            far = np.nanmin(np.maximum(t1, t2), axis=1)
            hit = (near <= far) & (far > 0)
            best = np.where(hit, np.minimum(best, np.maximum(near, 0.0)), best)
    return best


FOOTPRINT = np.array([(x, y) for x in np.linspace(-0.32, 0.32, 9) for y in (-0.28, 0.28)]
                     + [(x, y) for x in (-0.32, 0.32) for y in np.linspace(-0.28, 0.28, 8)])
"""m: points around the rover's outline (hull 0.6 m long, wheels 0.56 m across), body frame."""


def touches(x: float, y: float, yaw: float, boxes) -> bool:
    """Whether the rover's outline at (x, y, yaw) reaches into any box footprint."""
    c, s = math.cos(yaw), math.sin(yaw)
    px = x + FOOTPRINT[:, 0] * c - FOOTPRINT[:, 1] * s
    py = y + FOOTPRINT[:, 0] * s + FOOTPRINT[:, 1] * c
    return any(bool(np.any((px > x0) & (px < x1) & (py > y0) & (py < y1))) for x0, y0, x1, y1 in boxes)


def test_the_range_ring_reads_the_true_distances_all_round_and_the_wanderer_touches_nothing(tmp_path):
    run = run_example(tmp_path, "range_ring/range_ring.prj", 30.0)
    times, scans = run.arrays["ring.time"], run.arrays["ring.ranges"]
    assert scans.shape[1] == 32 and 299 <= len(scans) <= 301   # 10 scans a second of 32 readings
    t, x, y, yaw = (run.column(c) for c in ("time", "truth.x", "truth.y", "truth.yaw"))
    # Reading i looks i x 11.25° counter-clockwise from straight behind (the preset's 360° at 11.25°).
    angles = np.radians(np.arange(32) * 11.25 - 180.0)
    errors, misses, checked = [], 0, 0
    for when, scan in zip(times[5:], scans[5:], strict=True):   # once the rover has settled
        row = int(np.argmin(np.abs(t - when)))
        assert abs(t[row] - when) < 1e-6
        truth = ray_box_distances(np.array([x[row], y[row]]), yaw[row] + angles, run.boxes)
        for measured, true in zip(scan, truth, strict=True):
            if abs(true - 5.0) < 0.06:
                continue                             # at the range's edge noise decides: either is right
            checked += 1
            if true > 5.0:
                misses += not np.isnan(measured)
            elif np.isnan(measured):
                misses += 1
            else:
                errors.append(abs(float(measured) - true))
    errors_ = np.array(errors)
    assert checked > 8000 and len(errors_) > 4000
    assert misses <= 0.01 * checked
    assert np.median(errors_) < 0.012 and np.mean(errors_ < 0.05) > 0.98   # 1 cm noise, 1 cm steps
    # The wanderer: it went places (over 8 m of path) and its outline never reached into a box or wall.
    travelled = float(np.sum(np.hypot(np.diff(x), np.diff(y))))
    assert travelled > 8.0
    assert not any(touches(*pose, run.boxes) for pose in zip(x, y, yaw, strict=True))
    # Positive control of the collision check: facing a box's west face from 0.2 m away (centre to face),
    # the outline (0.32 m ahead of the centre) is inside it; from 0.4 m away it is not.
    x0, y0, _x1, y1 = run.boxes[-1]                 # the last box added
    assert touches(x0 - 0.2, (y0 + y1) / 2, 0.0, run.boxes)
    assert not touches(x0 - 0.4, (y0 + y1) / 2, 0.0, run.boxes)
    assert "open way" in run.output


# --- wall following with sonar ------------------------------------------------------------------------------

def test_the_wall_follower_goes_round_the_l_shaped_room_keeping_its_distance(tmp_path):
    run = run_example(tmp_path, "wall_following/wall_following.prj", 45.0)
    assert len(run.boxes) == 6                       # the L's six walls
    x, y, yaw = run.column("truth.x"), run.column("truth.y"), run.column("truth.yaw")
    # A lap: five left turns and one right turn make one turn to the left in all.
    turned = float(np.sum(np.diff(np.unwrap(yaw))))
    assert turned > 2 * math.pi - 0.3
    assert not any(touches(*pose, run.boxes) for pose in zip(x, y, yaw, strict=True))
    # What perfect right-side sonars would read (the wall's true distance along their axes, from the
    # true pose), where the rover runs alongside a wall: it holds the wall 0.6 m off (KEEP).
    sides = []
    for mount in ((0.25, -0.2), (-0.25, -0.2)):
        sx = x + mount[0] * np.cos(yaw) - mount[1] * np.sin(yaw)
        sy = y + mount[0] * np.sin(yaw) + mount[1] * np.cos(yaw)
        sides.append(ray_box_distances(np.column_stack([sx, sy]), yaw - math.pi / 2, run.boxes))
    front, rear = sides
    alongside = (front < 1.2) & (rear < 1.2) & (np.abs(front - rear) < 0.1)
    assert alongside.mean() > 0.5                    # most of the lap runs along a wall
    off = np.abs((front + rear)[alongside] / 2 - 0.6)
    assert np.median(off) < 0.1 and np.percentile(off, 90) < 0.25
    assert "lost the wall: arcing right" in run.output and "wall ahead: turning left" in run.output


# --- GPS waypoint driving -----------------------------------------------------------------------------------

def test_gps_waypoint_driving_visits_every_waypoint_in_order_and_stops_on_the_last(tmp_path):
    from geographiclib.geodesic import Geodesic

    code = runpy.run_path(str(EXAMPLES / "gps_waypoints" / "gps_waypoints.py"))
    mission, within = code["MISSION"], code["ARRIVED_WITHIN"]
    run = run_example(tmp_path, "gps_waypoints/gps_waypoints.prj", 45.0)

    def enu(lat: float, lon: float) -> tuple[float, float]:
        """Metres east and north of the terrain's centre (35.3° N, 80.7° W), by geodesic."""
        line = Geodesic.WGS84.Inverse(35.3, -80.7, lat, lon)
        azimuth = math.radians(line["azi1"])
        return line["s12"] * math.sin(azimuth), line["s12"] * math.cos(azimuth)

    targets = np.array([enu(lat, lon) for lat, lon in mission])
    assert np.allclose(targets[0], (8.0, 0.0), atol=0.01)      # the comments' figures, as a check of enu()
    t, x, y, yaw, speed = (run.column(c) for c in ("time", "truth.x", "truth.y", "truth.yaw", "truth.speed"))
    # The receiver's error at each fix: its reported position against the antenna's true one (0.1 m
    # behind the body's centre).
    fixes = ~np.isnan(run.column("gps.latitude"))
    reported = np.array([enu(a, b) for a, b in zip(run.column("gps.latitude")[fixes],
                                                   run.column("gps.longitude")[fixes], strict=True)])
    antenna = np.column_stack([x - 0.1 * np.cos(yaw), y - 0.1 * np.sin(yaw)])[fixes]
    gps_error = float(np.max(np.hypot(*(reported - antenna).T)))
    assert 0.05 < gps_error < 3.0                    # 1 m RMS, wandering: noise is on, and sane
    reach = within + gps_error + 0.2                 # arrived by the GPS: the truth can be off by its error
    start = 0
    for k, (te, tn) in enumerate(targets):
        distance = np.hypot(x[start:] - te, y[start:] - tn)
        assert distance.min() <= reach, (k, float(distance.min()), reach)
        start += int(np.argmax(distance <= reach))   # the next waypoint is reached after this one
    assert start < len(t) - 120                      # the last one was reached before the end
    # Stopped on the last waypoint and stayed there.
    assert np.all(speed[t > t[-1] - 2.0] < 0.05)
    assert math.hypot(x[-1] - targets[-1][0], y[-1] - targets[-1][1]) <= reach
    assert "mission complete" in run.output and run.output.count("reached") == len(mission)
