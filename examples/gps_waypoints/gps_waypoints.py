"""SEAR example: GPS waypoint driving.

The rover drives to each waypoint of a mission in turn, given as latitude and longitude as a mission
planner would give them, and stops at the last. Each GPS fix and waypoint is turned into metres east
and north of the terrain's centre with the WGS-84 ellipsoid's radii of curvature there (a local flat
approximation, within millimetres over a few hundred metres); the compass gives the heading, the rear
wheels' odometer the speed.

Twice a second the GPS track so far and the waypoints are shown in the window's Grids dock with
sim.show_grid (a 30 m x 30 m picture of 0.25 m cells: the track grey, the waypoints black squares).

The GPS error wanders slowly (1 m RMS here), so "arrived" means within ARRIVED_WITHIN of where the GPS
says the waypoint is: the true position can be off by the GPS's error at the time.
"""

import math

import numpy as np

ORIGIN = (35.3, -80.7)        # latitude, longitude of the terrain's centre (the project's), degrees
MISSION = [                   # latitude, longitude, degrees
    (35.3000000, -80.6999120),   # 8 m east of the centre
    (35.3000901, -80.6999120),   # 8 m east, 10 m north
    (35.3001082, -80.7000440),   # 4 m west, 12 m north
    (35.3000180, -80.7000880),   # 8 m west, 2 m north
    (35.3000361, -80.7000000),   # 4 m north: stop here
]
ARRIVED_WITHIN = 1.0          # m
CRUISE_SPEED = 1.2            # m/s
SLOW_WITHIN = 3.0             # m from the last waypoint: slow down to stop on it
A, F = 6378137.0, 1 / 298.257223563   # WGS-84 semi-major axis (m) and flattening

TRACK_CELL = 0.25            # m
TRACK_SIZE = 120              # cells a side: 30 m, centred on the terrain's centre

track = np.zeros((TRACK_SIZE, TRACK_SIZE))
last_shown = -1.0
waypoint = 0
last_odometer = None
speed = 0.0
done = False


def metres_per_degree(latitude):
    """Metres per degree of latitude (north) and of longitude (east) at `latitude` (WGS-84)."""
    e2 = F * (2 - F)
    s = math.sin(math.radians(latitude))
    meridian = A * (1 - e2) / (1 - e2 * s * s) ** 1.5          # radius of curvature north-south
    normal = A / math.sqrt(1 - e2 * s * s)                      # east-west
    return math.radians(meridian), math.radians(normal) * math.cos(math.radians(latitude))


NORTH_PER_DEG, EAST_PER_DEG = metres_per_degree(ORIGIN[0])


def local(latitude, longitude):
    """Metres east and north of ORIGIN."""
    return (longitude - ORIGIN[1]) * EAST_PER_DEG, (latitude - ORIGIN[0]) * NORTH_PER_DEG


def init(sim):
    sim.print(f"mission of {len(MISSION)} waypoints")
    for latitude, longitude in MISSION:
        col, row = track_cell(*local(latitude, longitude))
        track[max(0, row - 2):row + 3, max(0, col - 2):col + 3] = 1.0


def track_cell(east, north):
    """Column and row of the track picture's cell under (east, north) m."""
    half = TRACK_SIZE * TRACK_CELL / 2
    return int((east + half) / TRACK_CELL), int((north + half) / TRACK_CELL)


def show_track(sim, east, north):
    """The GPS fix into the track picture, and the picture to the window twice a second."""
    global last_shown
    col, row = track_cell(east, north)
    if 0 <= row < TRACK_SIZE and 0 <= col < TRACK_SIZE:
        track[row, col] = max(track[row, col], 0.5)
    if sim.time - last_shown >= 0.5:
        last_shown = sim.time
        half = TRACK_SIZE * TRACK_CELL / 2
        sim.show_grid(track, x=-half, y=-half, cell=TRACK_CELL, title="GPS track")


def main_loop(sim):
    global waypoint, last_odometer, speed, done
    fix, heading, odo = sim.read("gps"), sim.read("compass"), sim.read("odometer")
    if fix is None or heading is None or odo is None:
        return
    if last_odometer is not None:
        speed = 0.8 * speed + 0.2 * (odo.distance - last_odometer) * 60.0   # 60 control ticks a second
    last_odometer = odo.distance
    east, north = local(fix.latitude, fix.longitude)
    show_track(sim, east, north)
    if done:
        sim.accelerate(0.0)
        sim.brake(20.0)
        return
    target_e, target_n = local(*MISSION[waypoint])
    distance = math.hypot(target_e - east, target_n - north)
    last = waypoint == len(MISSION) - 1
    if distance < ARRIVED_WITHIN:
        sim.print(f"t={sim.time:5.1f} s: waypoint {waypoint + 1} reached ({east:+.1f} m east, {north:+.1f} m north)")
        if last:
            done = True
            sim.print("mission complete")
            return
        waypoint += 1
        return
    bearing = math.degrees(math.atan2(target_e - east, target_n - north))   # clockwise from north
    error = (bearing - heading + 180.0) % 360.0 - 180.0                      # > 0: the target is to the right
    sim.steer(max(-0.5, min(0.5, -math.radians(error) * 1.5)))               # + steers left
    wanted = CRUISE_SPEED * (0.5 if abs(error) > 60 else 1.0)
    if last:
        wanted = min(wanted, max(0.3, CRUISE_SPEED * distance / SLOW_WITHIN))
    sim.brake(0.0)
    sim.accelerate(max(-20.0, min(40.0, 60.0 * (wanted - speed))))
