"""SEAR example: occupancy-grid mapping with a 360° LIDAR (log-odds, 0.1 m cells).

The rover drives a loop around a room of walls with a pillar in the middle. Every LIDAR scan updates a
grid of 0.1 m cells with the classic log-odds rule: the cells a beam passes through become more likely
free, the cell it ends in more likely occupied (a beam that returns nothing frees cells up to the
LIDAR's range). The grid is published to the simulation window's Grids dock with sim.show_grid twice a
second: white is free, black occupied, grey not yet seen.

Mapping with known poses: the robot's pose comes from sim.pose (ground truth), so the map shows what
the sensor model alone gives. A real robot would estimate its pose as well (SLAM), which is beyond a
first example.
"""

import math

import numpy as np

# --- the room (init builds it; the map knows nothing of it) --------------------------------------------
ROOM = [(-4.0, -3.0), (4.0, -3.0), (4.0, 3.0), (-4.0, 3.0)]   # corners of the walls' centre lines, m
PILLAR = (0.0, 0.0, 0.6)                                       # centre x, y and edge, m
SPUR = ((1.0, 3.0), (1.0, 2.2))                                # a short wall into the room, m

# --- the route: a loop around the pillar (x, y), m ----------------------------------------------------
ROUTE = [(2.5, -1.6), (2.5, 1.6), (-2.5, 1.6), (-2.5, -1.6)]
CRUISE_SPEED = 0.8          # m/s
ARRIVED_WITHIN = 0.7        # m: switch to the next corner this close to it

# --- the grid -----------------------------------------------------------------------------------------
CELL = 0.1                  # m
ORIGIN = (-5.0, -4.0)       # the grid's south-west corner, m
SIZE = (100, 80)            # cells east-west, north-south: 10 m x 8 m
L_OCC, L_FREE, L_MAX = 0.85, -0.4, 6.0   # log-odds added for a hit, for a pass; clamp
PUBLISH_EVERY = 0.5         # s of simulated time

log_odds = np.zeros((SIZE[1], SIZE[0]))   # rows: y (south to north), columns: x (west to east)
seen = np.zeros(SIZE[::-1], dtype=bool)
waypoint = 0
last_scan = None
last_publish = -1.0
scans = 0


def init(sim):
    """Build the room before the first physics step."""
    for (x1, y1), (x2, y2) in zip(ROOM, ROOM[1:] + ROOM[:1], strict=True):
        sim.add_wall(x1, y1, x2, y2, height=0.6)
    x, y, size = PILLAR
    sim.add_box(x, y, size=size, mass=0.0)
    (x1, y1), (x2, y2) = SPUR
    sim.add_wall(x1, y1, x2, y2, height=0.6)


def cells(x, y):
    """Grid indices (column, row) of world points x, y (m); -1 outside the grid."""
    col = np.floor((np.asarray(x) - ORIGIN[0]) / CELL).astype(int)
    row = np.floor((np.asarray(y) - ORIGIN[1]) / CELL).astype(int)
    outside = (col < 0) | (col >= SIZE[0]) | (row < 0) | (row >= SIZE[1])
    return np.where(outside, -1, col), np.where(outside, -1, row)


def integrate(scan, pose, max_range):
    """One scan into the grid: log-odds down for the cells each beam crosses, up where it ends."""
    count = len(scan)
    angles = pose.yaw + np.radians(np.arange(count) * 360.0 / count - 180.0)
    hit = ~np.isnan(scan)
    ranges = np.where(hit, scan, max_range)
    # Points every half cell along each beam, short of its end by a cell (that is where it hit).
    steps = np.arange(0.0, max_range, CELL / 2)
    along = steps[None, :] < (ranges[:, None] - CELL)
    px = pose.x + steps[None, :] * np.cos(angles)[:, None]
    py = pose.y + steps[None, :] * np.sin(angles)[:, None]
    col, row = cells(px[along], py[along])
    free = np.zeros(SIZE[::-1], dtype=bool)
    ok = col >= 0
    free[row[ok], col[ok]] = True
    hx = pose.x + ranges[hit] * np.cos(angles[hit])
    hy = pose.y + ranges[hit] * np.sin(angles[hit])
    hcol, hrow = cells(hx, hy)
    occupied = np.zeros_like(free)
    ok = hcol >= 0
    occupied[hrow[ok], hcol[ok]] = True
    free &= ~occupied
    log_odds[free] += L_FREE
    log_odds[occupied] += L_OCC
    np.clip(log_odds, -L_MAX, L_MAX, out=log_odds)
    seen[free | occupied] = True


def probabilities():
    """P(occupied) of every cell, NaN where no beam has been."""
    p = 1.0 - 1.0 / (1.0 + np.exp(log_odds))
    return np.where(seen, p, np.nan)


def drive(sim, pose):
    """Steer for the next corner of the route and hold the cruise speed."""
    global waypoint
    tx, ty = ROUTE[waypoint]
    if math.hypot(tx - pose.x, ty - pose.y) < ARRIVED_WITHIN:
        waypoint = (waypoint + 1) % len(ROUTE)
        tx, ty = ROUTE[waypoint]
    error = math.atan2(ty - pose.y, tx - pose.x) - pose.yaw
    error = (error + math.pi) % (2 * math.pi) - math.pi
    sim.steer(max(-0.5, min(0.5, 1.5 * error)))
    speed = sim.speed
    sim.accelerate(max(-20.0, min(40.0, 80.0 * (CRUISE_SPEED - speed))))


def main_loop(sim):
    global last_scan, last_publish, scans
    pose = sim.pose
    drive(sim, pose)
    scan = sim.read("lidar")
    if scan is not None and scan is not last_scan:     # a new scan (readings arrive as new arrays)
        last_scan = scan
        integrate(scan, pose, max_range=6.0)
        scans += 1
    if sim.time - last_publish >= PUBLISH_EVERY:
        last_publish = sim.time
        sim.show_grid(probabilities(), x=ORIGIN[0], y=ORIGIN[1], cell=CELL, title="occupancy")
