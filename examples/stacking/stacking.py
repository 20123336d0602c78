"""SEAR example: stack three boxes into a tower with the gripper.

Three 15 cm boxes stand in a row ahead of the robot, at x = 1.0, 2.0 and 3.0 m. The robot picks up the
first, carries it over the second and puts it down on top: a tower of two. Then it grips the tower's
bottom box, lifts the two-box tower, carries it over the third box and puts it down there: a tower of
three, its top box resting two box heights (0.30 m) above the ground.

It steers by its ground-truth pose (sim.pose) to keep the example short, and finds each box with the
gripper's break beam (sim.read("gripper").beam): it creeps forward until the beam between its paddles is
broken. The gripper holds by friction (docs/gripper.md): these 0.3 kg boxes are well within its grip.
"""

import math

SIZE = 0.15                 # m, box edge
MASS = 0.3                  # kg
BOXES = (1.0, 2.0, 3.0)     # m, x of the three boxes (all on y = 0)
CLEAR = 0.03                # m, how far a carried box's bottom clears the box it goes onto
CREEP = 6.0                 # N, engine force while looking for a box with the beam
CRUISE = 0.25               # m/s, top speed between boxes


def steer_straight(sim, forwards=True):
    """Keep to the line y = 0 heading east (+x); backing up, just keep the heading."""
    pose = sim.pose
    if forwards:
        sim.steer(-2.0 * pose.y - 1.5 * pose.yaw)
    else:
        sim.steer(1.5 * pose.yaw)       # reversing, a steered car turns the other way


def stop(sim):
    """Brake until the robot stands still."""
    sim.accelerate(0.0)
    sim.brake(20.0)
    while sim.speed > 0.005 and sim.step():
        pass
    sim.brake(0.0)


def drive_to(sim, x):
    """Drive along y = 0 until the robot's centre is at x m (forwards or backwards), and stop there."""
    last_x, last_t = sim.pose.x, sim.time
    while sim.step():
        pose = sim.pose
        dt = sim.time - last_t
        velocity = (pose.x - last_x) / dt if dt > 0 else 0.0
        last_x, last_t = pose.x, sim.time
        error = x - pose.x
        if abs(error) < 0.01:
            break
        wanted = math.copysign(max(0.05, min(CRUISE, 1.2 * abs(error))), error)
        sim.accelerate(max(-20.0, min(20.0, 80.0 * (wanted - velocity))))
        steer_straight(sim, forwards=wanted >= 0)
    stop(sim)


def creep_to_box(sim):
    """Creep forward until the gripper's break beam sees a box between the paddles; then stop."""
    sim.brake(0.0)
    while sim.step():
        steer_straight(sim)
        beam = sim.read("gripper")
        if beam is not None and beam.beam:
            break
        sim.accelerate(CREEP if sim.speed < 0.15 else 0.0)
    stop(sim)


def move_gripper(sim, *, open=None, height=None, settle=1.5):
    """Send a command to the gripper and give its motors `settle` s to get there."""
    sim.gripper(open=open, height=height)
    sim.wait(settle)


def carry_onto(sim, target_x, grabbed_x, lift, place):
    """With a load gripped whose bottom box's centre was at grabbed_x: lift it to `lift` m, drive until
    it is over target_x, lower it to `place` m and let go; then back away and lower the paddles."""
    offset = grabbed_x - sim.pose.x            # where the load sits ahead of the robot's centre
    move_gripper(sim, height=lift, settle=2.0)
    drive_to(sim, target_x - offset)
    move_gripper(sim, height=place, settle=1.0)
    move_gripper(sim, open=True, settle=1.0)
    drive_to(sim, sim.pose.x - 0.4)
    move_gripper(sim, height=0.0, settle=2.5)


def init(sim):
    for x in BOXES:
        sim.add_box(x, 0.0, size=SIZE, mass=MASS)
    sim.print("stacking: three boxes at x =", ", ".join(f"{x:g}" for x in BOXES), "m")


def run(sim):
    first, second, third = BOXES
    move_gripper(sim, open=True, height=0.0, settle=0.5)
    # 1. The first box onto the second: a tower of two at the second box's place.
    creep_to_box(sim)
    move_gripper(sim, open=False)
    carry_onto(sim, second, first, lift=SIZE + CLEAR, place=SIZE + 0.01)
    sim.print(f"t = {sim.time:.1f} s: a tower of two at x = {second:g} m")
    # 2. The tower of two, held by its bottom box, onto the third box.
    creep_to_box(sim)
    move_gripper(sim, open=False)
    carry_onto(sim, third, second, lift=SIZE + CLEAR, place=SIZE + 0.01)
    sim.print(f"t = {sim.time:.1f} s: a tower of three at x = {third:g} m")
    while sim.step():
        pass
