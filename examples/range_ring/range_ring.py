"""SEAR example: a 32-beam range map, and a robot that wanders by it.

The rover carries a ring of 32 range beams all round (the LIDAR preset "32-beam range ring (360°)":
reading i looks i x 11.25° counter-clockwise from straight behind, so reading 16 looks straight ahead).
The window's LIDAR dock draws the ring live as a polar map around the robot.

The robot wanders a room of boxes using nothing but the ring: it steers for the most open direction
in front of it (the longest reading within 90° of ahead, each beam taken as the shortest of it and its
two neighbours on each side, so a gap must be wide enough for the body), slows down as the way ahead
closes, and backs up with the wheels turned away from the open side (so the nose swings towards it)
when something is closer than STOP_AT ahead.
"""

import math

import numpy as np

BEAMS = 32
STEP = 2 * math.pi / BEAMS                     # rad between readings
ANGLES = np.arange(BEAMS) * STEP - math.pi     # rad from straight ahead, counter-clockwise (+ = left)
MAX_RANGE = 5.0                                # m, the preset's
CRUISE_SPEED = 0.7                             # m/s
STOP_AT = 0.55                                 # m ahead (from the ring's centre): back up
REVERSE_FOR = 1.5                              # s

BOXES = [(-1.0, -1.2, 0.6), (1.5, 0.8, 0.8), (-2.0, 1.5, 0.5), (2.6, -1.8, 0.6)]   # x, y, edge, m

reversing_until = -1.0
turn_away = 0.5
last_report = 0.0


def init(sim):
    """A 10 m x 8 m room with four boxes (mass 0: fixed)."""
    corners = [(-5.0, -4.0), (5.0, -4.0), (5.0, 4.0), (-5.0, 4.0)]
    for (x1, y1), (x2, y2) in zip(corners, corners[1:] + corners[:1], strict=True):
        sim.add_wall(x1, y1, x2, y2, height=0.6)
    for x, y, size in BOXES:
        sim.add_box(x, y, size=size, mass=0.0)


def main_loop(sim):
    global reversing_until, turn_away, last_report
    scan = sim.read("ring")
    if scan is None:
        return
    ranges = np.where(np.isnan(scan), MAX_RANGE, scan)
    # Each beam as the shortest of itself and two neighbours on each side: a gap must fit the body.
    clear = np.min([np.roll(ranges, shift) for shift in (-2, -1, 0, 1, 2)], axis=0)
    front = np.abs(ANGLES) <= math.pi / 2
    best = float(ANGLES[front][np.argmax(clear[front] - 0.3 * np.abs(ANGLES[front]))])  # ties: straight on
    ahead = float(np.min(ranges[np.abs(ANGLES) < 0.4]))          # the three beams within ±22.5°
    if sim.time < reversing_until:
        sim.steer(-turn_away)
        sim.accelerate(-25.0 if sim.speed < 0.4 else 0.0)
        return
    if ahead < STOP_AT:
        reversing_until = sim.time + REVERSE_FOR
        # Back out with the wheels turned away from the open way, so the nose swings towards it.
        turn_away = 0.5 if best >= 0 else -0.5
        sim.brake(20.0)
        return
    sim.brake(0.0)
    sim.steer(max(-0.5, min(0.5, 1.2 * best)))
    wanted = CRUISE_SPEED * min(1.0, (ahead - STOP_AT) / 1.0 + 0.3)
    sim.accelerate(max(-20.0, min(40.0, 80.0 * (wanted - sim.speed))))
    if sim.time - last_report >= 2.0:
        last_report = sim.time
        nearest = int(np.argmin(ranges))
        sim.print(f"t={sim.time:4.1f} s: open way {math.degrees(best):+4.0f}°, "
                  f"nearest {ranges[nearest]:.2f} m at {math.degrees(ANGLES[nearest]):+4.0f}°")
