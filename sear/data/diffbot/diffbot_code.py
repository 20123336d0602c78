"""SEAR differential-drive demo: drive a 2 m square by wheel odometry, turning on the spot at the corners.

The robot has two driven wheels and two swivel casters (Vehicle Dynamics: drive type differential). It
works out where it is from its two wheel encoders alone (differential odometry: the mean of the wheels'
distances moves it ahead, their difference turns it), steers towards the next corner by asking each
wheel for a speed, and holds those speeds with a PI controller per wheel that sets the wheel forces with
sim.drive(left, right). At a corner it turns on the spot (one wheel forwards, the other backwards). The
first side of the square passes under a table; the infrared sensor stops the robot if anything is
close ahead.
"""

import math

# --- user variables (they keep their values between main_loop calls) ---------------------------
SIDE = 2.0                # m, the square's side
CORNERS = [(SIDE, 0.0), (SIDE, SIDE), (0.0, SIDE), (0.0, 0.0)]   # (east, north) from the start, m
TRACK = 0.34              # m between the driven wheels' contact points
CRUISE = 0.35             # m/s
TURN_RATE = 1.2           # rad/s on the spot
ARRIVED_WITHIN = 0.03     # m
FACING_WITHIN = 0.01      # rad
KP, KI = 8.0, 30.0        # wheel speed controller: N per m/s, N per m
MAX_FORCE = 2.0           # N a wheel (the project's engine force shared by the two)
CONTROL_DT = 1.0 / 60.0   # s between main_loop calls (the project's control rate)

x = y = heading = 0.0     # odometry: m east, m north, rad from east (counter-clockwise)
last = None               # last encoder distances (left, right), m
speeds = [0.0, 0.0]       # measured wheel speeds, m/s
integral = [0.0, 0.0]
corner = 0
turning = False
laps = 0


def init(sim):
    """A room around the square, and a table over its first side that the robot drives under."""
    sim.add_wall(-3.0, -2.0, 5.0, -2.0, height=0.3)
    sim.add_wall(5.0, -2.0, 5.0, 4.0, height=0.3)
    sim.add_wall(5.0, 4.0, -3.0, 4.0, height=0.3)
    sim.add_wall(-3.0, 4.0, -3.0, -2.0, height=0.3)
    sim.add_table(1.0, 0.0, 0.8, 0.7, 0.25)   # top 0.21-0.25 m up; the robot is 0.13 m tall
    sim.add_box(1.0, 1.0, size=0.3, mass=0.0)  # inside the square, out of the robot's way
    sim.print("diffbot: a", SIDE, "m square by odometry; sensors:", ", ".join(sim.sensor_names))


def wrap(angle):
    return (angle + math.pi) % (2 * math.pi) - math.pi


def main_loop(sim):
    """Runs every control tick (60 Hz) once user code has started."""
    global x, y, heading, last, corner, turning, laps
    left, right = sim.read("left_odo"), sim.read("right_odo")
    if left is None or right is None:
        return
    now = (left.distance, right.distance)
    if last is not None:
        dl, dr = now[0] - last[0], now[1] - last[1]
        ahead = (dl + dr) / 2.0
        x += ahead * math.cos(heading + (dr - dl) / TRACK / 2.0)
        y += ahead * math.sin(heading + (dr - dl) / TRACK / 2.0)
        heading = wrap(heading + (dr - dl) / TRACK)
        speeds[0], speeds[1] = dl / CONTROL_DT, dr / CONTROL_DT
    last = now

    tx, ty = CORNERS[corner]
    bearing = math.atan2(ty - y, tx - x)
    if turning:  # on the spot, towards the next corner
        error = wrap(bearing - heading)
        if abs(error) < FACING_WITHIN:
            turning = False
        rate = max(-TURN_RATE, min(TURN_RATE, 4.0 * error))
        want = (-rate * TRACK / 2.0, rate * TRACK / 2.0)
    else:
        distance = math.hypot(tx - x, ty - y)
        if distance < ARRIVED_WITHIN:
            sim.print(f"t={sim.time:5.1f} s: corner {corner + 1} at ({tx:.1f}, {ty:.1f}) m")
            corner = (corner + 1) % len(CORNERS)
            laps += corner == 0
            turning = True
            want = (0.0, 0.0)
        else:
            error = wrap(bearing - heading) if distance > 0.1 else 0.0
            speed = min(CRUISE, 1.5 * distance + 0.05)
            rate = 3.0 * error
            want = (speed - rate * TRACK / 2.0, speed + rate * TRACK / 2.0)
    ir = sim.read("front_ir")
    if ir is not None and ir < 0.15 and not turning:
        want = (0.0, 0.0)  # something close ahead: wait

    forces = []
    for side in (0, 1):
        error = want[side] - speeds[side]
        integral[side] = max(-0.1, min(0.1, integral[side] + error * CONTROL_DT))
        forces.append(max(-MAX_FORCE, min(MAX_FORCE, KP * error + KI * integral[side])))
    sim.drive(forces[0], forces[1])
