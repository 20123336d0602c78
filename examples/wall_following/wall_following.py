"""SEAR example: wall following with sonar.

The rover keeps the wall on its right side at KEEP metres (measured by its sonars), all the way round an
L-shaped room: five inside corners and one outside corner a lap. Two sonars on the right side, 0.5 m
apart, give both the distance to the wall (their mean) and the rover's angle to it (their difference); a
third looks ahead.

- Wall ahead closer than TURN_AT (an inside corner, or the block): turn left, slowly, until both
  right-side sonars see the new wall (a sonar hears no echo from a wall it meets at more than 22.5°,
  so halfway round a corner it hears nothing: the turn must not end there).
- Right side sees no wall within LOST_AT (an outside corner, past the block): arc right until it does.
- Otherwise steer to hold the distance and lie parallel to the wall (a PD law on distance and angle).

Nothing here uses the true pose: only the three sonars and the speed.
"""

import math

KEEP = 0.6                  # m from the right-side sonars to the wall
TURN_AT = 1.4               # m: a wall this close ahead starts a left turn
LOST_AT = 1.4               # m: no wall this close on the right: arc right to find it again
SPACING = 0.5               # m between the two right-side sonars
CRUISE_SPEED = 0.7          # m/s
K_DISTANCE = 0.9            # rad of steering per m off KEEP
K_ANGLE = 1.6               # rad of steering per rad off parallel

mode = ""


ROOM = [(-5.0, -3.5), (5.0, -3.5), (5.0, 0.5), (1.0, 0.5), (1.0, 3.5), (-5.0, 3.5)]
"""Corners of the walls' centre lines, m: an L, 10 m x 7 m with its north-east 4 m x 3 m cut away."""


def init(sim):
    """The L-shaped room."""
    for (x1, y1), (x2, y2) in zip(ROOM, ROOM[1:] + ROOM[:1], strict=True):
        sim.add_wall(x1, y1, x2, y2, height=0.6)


def say(sim, new_mode):
    global mode
    if new_mode != mode:
        mode = new_mode
        sim.print(f"t={sim.time:5.1f} s: {mode}")


def seen(distance):
    return distance is not None and distance < LOST_AT


def main_loop(sim):
    ahead = sim.read("front")
    front, rear = sim.read("right_front"), sim.read("right_rear")
    speed = CRUISE_SPEED
    turning = mode.startswith("wall ahead") and not (seen(front) and seen(rear))
    if (ahead is not None and ahead < TURN_AT) or turning:
        say(sim, "wall ahead: turning left")
        steer = 0.5
        speed = 0.4
    elif not seen(front):
        say(sim, "lost the wall: arcing right")
        steer = -0.3
    else:
        say(sim, "following the wall")
        if not seen(rear):
            rear = front                       # the rear sonar is still past the corner
        distance = (front + rear) / 2
        angle = math.atan2(rear - front, SPACING)   # > 0: the nose points at the wall
        steer = K_ANGLE * angle - K_DISTANCE * (distance - KEEP)
    sim.steer(max(-0.5, min(0.5, steer)))
    sim.accelerate(max(-20.0, min(40.0, 80.0 * (speed - sim.speed))))
