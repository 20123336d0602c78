"""Two robots that avoid each other: each drives to a point 10 m straight ahead of where it starts and
keeps to the right of anything its sonar sees in front (the rule of the road), then steers back.

Both robots of two_robots.prj run this same file, each in its own process with its own sensors; neither
knows where the other is except through its sensors. Sensors: front sonar (up to 6.45 m), front infrared
(0.1-0.8 m), GPS (noise off, so the 0.5 m goal can be found) and compass.
"""

import math

# --- user variables (module variables keep their values between main_loop calls) ----------------
GOAL_AHEAD = 10.0         # m: the goal lies this far ahead of the start, along the start heading
ARRIVED_WITHIN = 0.5      # m
CRUISE_SPEED = 1.0        # m/s
AVOID_WITHIN = 2.5        # m: something nearer than this on the sonar is avoided
SWERVE = 0.45             # rad: steering to the right while something is ahead
CLEAR_FOR = 0.8           # s: keep swerving this long after the sonar clears
METRES_PER_DEG_LAT = 111_000.0

origin = None             # first GPS fix (lat, lon)
goal = None               # (east, north) m from the first fix
previous = None           # (time, east, north) of the last fix used for the speed
speed = 0.0
avoiding_until = -1.0
arrived = False


def local_metres(fix):
    """GPS fix -> metres east and north of the first fix (flat approximation, fine over 100 m)."""
    lat0, lon0 = origin
    north = (fix.latitude - lat0) * METRES_PER_DEG_LAT
    east = (fix.longitude - lon0) * METRES_PER_DEG_LAT * math.cos(math.radians(lat0))
    return east, north


def init(sim):
    sim.print("two robots: driving", GOAL_AHEAD, "m ahead and keeping right of whatever is in front")


def main_loop(sim):
    global origin, goal, previous, speed, avoiding_until, arrived
    fix, heading = sim.read("gps"), sim.read("compass")
    if fix is None or heading is None:
        return                                   # not sampled yet
    if origin is None:
        origin = (fix.latitude, fix.longitude)
        h = math.radians(heading)                # clockwise from north
        goal = (GOAL_AHEAD * math.sin(h), GOAL_AHEAD * math.cos(h))
    east, north = local_metres(fix)
    if previous is not None and sim.time - previous[0] >= 0.2:
        step = math.hypot(east - previous[1], north - previous[2]) / (sim.time - previous[0])
        speed = 0.5 * speed + 0.5 * step
        previous = (sim.time, east, north)
    elif previous is None:
        previous = (sim.time, east, north)

    if arrived or math.hypot(goal[0] - east, goal[1] - north) < ARRIVED_WITHIN:
        if not arrived:
            sim.print(f"t={sim.time:5.1f} s: arrived")
        arrived = True
        sim.accelerate(0.0)
        sim.steer(0.0)
        sim.brake(40.0)
        return

    sonar, ir = sim.read("front_sonar"), sim.read("front_ir")
    if (sonar is not None and sonar < AVOID_WITHIN) or ir is not None:
        if avoiding_until < sim.time:
            sim.print(f"t={sim.time:5.1f} s: something {sonar if sonar is not None else ir:.2f} m ahead, "
                      "keeping right")
        avoiding_until = sim.time + CLEAR_FOR
    if sim.time < avoiding_until:
        steer = -SWERVE                          # + steers left: swerve right
    else:
        bearing = math.degrees(math.atan2(goal[0] - east, goal[1] - north))
        error = (bearing - heading + 180.0) % 360.0 - 180.0   # + means the goal is to the right
        steer = max(-0.5, min(0.5, -math.radians(error) * 1.5))
    sim.steer(steer)
    sim.accelerate(max(-20.0, min(40.0, 60.0 * (CRUISE_SPEED - speed))))
    sim.brake(0.0)
