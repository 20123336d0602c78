"""DC gearmotors on the wheels (sear.motors, the motor_* Vehicle Dynamics fields): torque falls linearly
with speed, so a robot tops out where its motors' torque meets the load, and a stalled one pushes with the
stall torque.

Every expected value is worked out here from the motor's figures with the DC motor's line
τ_w = T_ws·(d − ω/ω_w0), T_ws = η·G·T_s·V_s/V_r, ω_w0 = ω_0·V_s/(V_r·G) (Hughes & Drury, Electric Motors
and Drives, ch. 3), not with sear.motors' own arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.demo import WHEEL_RADIUS_M
from sear.physics.world import World

from .helpers import ROVER, ROVER_WHEELS, G, rover_project, run, static_box, yaw

# A gearmotor behind a further 2:1 belt at 80 %, run at 9 V though rated at 12 V: every figure counts.
STALL, NO_LOAD, RATED, SUPPLY, RATIO, EFFICIENCY = 2.5, 16.0, 12.0, 9.0, 2.0, 0.8
"""N·m and rad/s at the gearmotor's output shaft at the rated voltage (V), the supply (V), the belt."""
MOTOR = dict(motor_stall_torque=STALL, motor_no_load_speed=NO_LOAD, motor_rated_voltage=RATED,
             motor_supply_voltage=SUPPLY, motor_gear_ratio=RATIO, motor_efficiency=EFFICIENCY)
RESISTANCE = 2.0
"""Ω: the same motor by its constants (any resistance; kt and ke follow from the line's two ends)."""
CONSTANTS = dict(motor_torque_constant=STALL * RESISTANCE / RATED, motor_back_emf_constant=RATED / NO_LOAD,
                 motor_resistance=RESISTANCE, motor_rated_voltage=RATED, motor_supply_voltage=SUPPLY,
                 motor_gear_ratio=RATIO, motor_efficiency=EFFICIENCY)
"""The motor of MOTOR given as kt = T_s·R/V_r (N·m/A), ke = V_r/ω_0 (V·s/rad) and R, for T_s = kt·V_r/R and
ω_0 = V_r/ke."""
WHEEL_STALL = EFFICIENCY * RATIO * STALL * SUPPLY / RATED
"""N·m at a wheel at full duty, held still: 3 N·m, so 30 N at the 0.1 m rim, within the rover's grip."""
WHEEL_NO_LOAD = NO_LOAD * SUPPLY / (RATED * RATIO)
"""rad/s of a wheel at full duty with no load: 6 rad/s, 0.6 m/s at the rim."""
TRACK = ROVER_WHEELS["left_rear"][1] - ROVER_WHEELS["right_rear"][1]
"""m between the driven wheels."""


def _forward_speed(world: World) -> float:
    """The body origin's velocity along the heading, m/s (the rover's centre of mass is its origin)."""
    body = world.vehicles[0].body_id
    _, orn = p.getBasePositionAndOrientation(body, physicsClientId=world.client)
    velocity, _ = p.getBaseVelocity(body, physicsClientId=world.client)
    heading = np.asarray(p.getMatrixFromQuaternion(orn)).reshape(3, 3)[:, 0]
    return float(np.dot(velocity, heading))


@pytest.mark.parametrize("given", ["stall torque and no-load speed", "constants kt, ke and R"])
def test_top_speed_on_flat_ground_is_where_the_motor_torque_meets_the_load(world_factory, given):
    """Differential rover, its two front casters rolling against c_rr = 0.2 of their load. The centre of
    mass lies midway between the axles, so the casters carry half the weight, and at a steady speed (no
    acceleration, every ground force at ground level) that stays so: the load is c_rr·m·g/2, shared by
    the two driven wheels. Top speed = no-load speed × (1 − load torque / stall torque), the same for the
    motor given by its line's two ends or by its constants."""
    c_rr = 0.2
    figures = MOTOR if given.startswith("stall") else CONSTANTS
    world = world_factory(drive_type="differential", rolling_resistance=c_rr, **figures)
    run(world, 0.5)
    world.vehicles[0].accelerate(ROVER.engine_force)  # full throttle: full duty
    run(world, 4.0)
    load_torque = c_rr * ROVER.mass * G / 2 / 2 * WHEEL_RADIUS_M
    expected = WHEEL_NO_LOAD * WHEEL_RADIUS_M * (1 - load_torque / WHEEL_STALL)
    assert 0.2 < load_torque / WHEEL_STALL < 0.5  # the load matters: a top speed well below no load
    speeds = []
    for _ in range(4):
        run(world, 0.25)
        speeds.append(_forward_speed(world))
    assert max(speeds) - min(speeds) < 0.01 * expected  # it has topped out
    assert speeds[-1] == pytest.approx(expected, rel=0.05)


def test_half_throttle_halves_the_no_load_speed(world_factory):
    """A skid-steered rover (every wheel driven, no caster, so no load on flat ground) at half throttle
    runs at the no-load speed at half the voltage: half the full duty's."""
    world = world_factory(drive_type="skid", **MOTOR)
    run(world, 0.5)
    world.vehicles[0].accelerate(ROVER.engine_force / 2)
    run(world, 4.0)
    assert _forward_speed(world) == pytest.approx(0.5 * WHEEL_NO_LOAD * WHEEL_RADIUS_M, rel=0.05)


def test_without_a_motor_the_same_force_keeps_accelerating(world_factory):
    """The positive control of the top speed: the force model (no motor fields) has no speed limit."""
    world = world_factory(drive_type="skid")
    run(world, 0.5)
    world.vehicles[0].accelerate(ROVER.engine_force)
    run(world, 4.0)
    # 40 N on 20 kg for 4 s: well past the motor's no-load rim speed.
    assert _forward_speed(world) > 3 * WHEEL_NO_LOAD * WHEEL_RADIUS_M


def test_a_motor_stiffer_than_the_step_settles_at_its_no_load_speed(world_factory):
    """A motor whose line is far steeper than the explicit step can follow (T_ws/(ω_w0·r²)·dt = 200 N·m /
    (2 rad/s · 0.01 m²) · 1/240 s ≈ 42 kg, against the rover's 5 kg per wheel) would overshoot its speed
    each step and chatter (it swings by 20 % without the step's guard); it settles at its no-load speed
    instead, steadily (the grip, μ = 1, caps what the tyres pass while it speeds up)."""
    stall, no_load = 200.0, 2.0  # N·m and rad/s at the wheel: gear ratio 1, supply = rated
    world = world_factory(drive_type="skid", motor_stall_torque=stall, motor_no_load_speed=no_load,
                          motor_rated_voltage=12.0)
    assert stall / (no_load * WHEEL_RADIUS_M**2) * world.dt > 4 * ROVER.mass / 4  # the motor is that stiff
    run(world, 0.5)
    world.vehicles[0].accelerate(ROVER.engine_force)
    run(world, 2.0)
    speeds = []
    for _ in range(24):
        run(world, 1 / 48)
        speeds.append(_forward_speed(world))
    assert np.mean(speeds) == pytest.approx(no_load * WHEEL_RADIUS_M, rel=0.02)
    assert max(speeds) - min(speeds) < 0.01 * no_load * WHEEL_RADIUS_M


def _wall_push(world: World, wall: int, seconds: float) -> float:
    """The wall's mean normal force on the robot over `seconds`, N (pybullet's contact solver's)."""
    steps = round(seconds / world.dt)
    total = 0.0
    for _ in range(steps):
        world.step()
        total += sum(c[9] for c in p.getContactPoints(world.vehicles[0].body_id, wall,
                                                      physicsClientId=world.client))
    return total / steps


def test_a_stalled_robot_pushes_a_wall_with_the_stall_torque(world_factory):
    """Skid steer against a wall at full throttle: each of the four wheels is held still and turns with
    the wheel stall torque, so the wall holds back 4 · T_ws / r (friction 1 carries 4 × 30 N on 196 N)."""
    world = world_factory(drive_type="skid", **MOTOR)
    front = 0.3  # the body's front face, m ahead of its origin (sear.demo.make_body: 0.6 m long)
    wall = static_box(world, (front + 0.05 + 0.1, 0.0, 0.5), (0.1, 2.0, 1.0))
    run(world, 0.5)
    world.vehicles[0].accelerate(ROVER.engine_force)
    run(world, 2.0)
    assert _forward_speed(world) == pytest.approx(0.0, abs=1e-3)  # stalled
    expected = 4 * WHEEL_STALL / WHEEL_RADIUS_M
    assert _wall_push(world, wall, 1.0) == pytest.approx(expected, rel=0.05)


def _spin_rate(world: World, seconds: float) -> float:
    """Mean yaw rate over `seconds`, rad/s."""
    before = yaw(world)
    run(world, seconds)
    return ((yaw(world) - before + math.pi) % (2 * math.pi) - math.pi) / seconds


def _steady_spin_rate(lead: float) -> float:
    """The yaw rate, rad/s, a differential robot at full opposite duties settles at when its centre of mass
    lies `lead` m ahead of the middle of its driven axle (casters free, no load but the robot's own mass).

    Steady rotation at Ω about a point C on the axle line, e m to the left of its middle (the driven wheels
    hold sideways): the wheels roll at v_L = −Ω(b/2 − e), v_R = Ω(b/2 + e) and push F = F_s·(±1 − v/v_0).
    The centre of mass circles C, so F_L + F_R = −m·Ω²·lead, the wheels' side force is m·Ω²·e, and the
    torques about the centre of mass cancel: (b/2)(F_R − F_L) = lead·m·Ω²·e. Hence e = m·Ω·lead·v_0/(2·F_s)
    and (m²·lead²·v_0/(2·F_s))·Ω³ + (b²·F_s/(2·v_0))·Ω − b·F_s = 0; with lead = 0, Ω = 2·v_0/b."""
    force, speed, mass = WHEEL_STALL / WHEEL_RADIUS_M, WHEEL_NO_LOAD * WHEEL_RADIUS_M, ROVER.mass
    roots = np.roots([mass**2 * lead**2 * speed / (2 * force), 0.0, TRACK**2 * force / (2 * speed),
                      -TRACK * force])
    real = [float(r.real) for r in roots if abs(r.imag) < 1e-9 and r.real > 0]
    assert len(real) == 1  # the cubic rises monotonically: one positive root
    return real[0]


@pytest.mark.parametrize("motor", [True, False], ids=["motor", "force"])
def test_holding_h_spins_a_differential_robot_up_to_its_motor_speed(tmp_path, motor):
    """H held (the window's manual input: steer 1, no throttle) drives the sides at full duty in opposite
    directions. With motors (casters free of rolling resistance) the spin tops out where the driven
    wheels' motors carry the robot's own circling (_steady_spin_rate), below 2·v_0/b, each wheel at most
    its no-load rim speed. With plain forces (the positive control) it spins up past that until its tyres
    slide."""
    from sear.runtime.simulation import Simulation

    no_load_rate = 2 * WHEEL_NO_LOAD * WHEEL_RADIUS_M / TRACK
    top = _steady_spin_rate(-ROVER_WHEELS["left_rear"][0])  # the rover's centre of mass is its origin
    assert 0.8 * no_load_rate < top < no_load_rate
    fields = MOTOR if motor else {}
    simulation = Simulation(rover_project(tmp_path, drive_type="differential", rolling_resistance=0.0, **fields))
    try:
        world = simulation.world
        run(world, 0.5)
        simulation.set_manual_input(0.0, 1.0, False)
        rates = [_spin_rate(world, 0.25) for _ in range(12)]
        if motor:
            assert max(rates) < 1.05 * top  # never past it
            assert rates[-1] == pytest.approx(top, rel=0.05)
            assert abs(rates[-1] - rates[-2]) < 0.01 * top  # topped out
        else:
            # The force spins it up past the motor's limit (until its tyres slide, within a second).
            assert max(rates[:4]) > 1.1 * no_load_rate
    finally:
        simulation.close()


HUSKY_WHEEL_RADIUS = 0.17775
"""m: husky.urdf's wheel <cylinder radius>; its wheel joints are continuous, with no velocity limit."""


@pytest.mark.parametrize("motor", [True, False], ids=["motor", "force"])
def test_a_urdf_robot_without_joint_velocity_limits_tops_out_at_its_motor_speed(tmp_path, motor):
    """Husky (four driven wheels, skid steer) at full throttle on flat ground: with a motor, its joints,
    which give no velocity limit, take the motor's, and it tops out below the wheels' no-load speed where
    the motor's torque meets the load. The load is pybullet's (its soft wheel contacts roll with losses),
    so it is read as the torque the joint motors apply once the speed has settled (pybullet's joint
    state); the wheels then turn at ω_w0·(1 − τ/T_ws). Without a motor (the positive control) the same
    engine force takes it far past the motor's speed (joints without a limit get 20 m/s)."""
    from sear.runtime.simulation import Simulation

    from .test_urdf import HUSKY, drive, urdf_project

    project = urdf_project(tmp_path, HUSKY, "skid", 100.0)
    if motor:
        for name, value in MOTOR.items():
            setattr(project.dynamics, name, value)
    simulation = Simulation(project)
    try:
        vehicle = simulation.world.vehicles[0]
        drive(simulation, 0.5, 0.0)
        if not motor:  # within 3 s: on at 1.9 m/s² it would leave the 60 m terrain at 7 s
            drive(simulation, 3.0, 1.0)
            assert float(np.linalg.norm(vehicle.state().linear_velocity[:2])) > 3 * WHEEL_NO_LOAD * HUSKY_WHEEL_RADIUS
            return
        drive(simulation, 8.0, 1.0)  # the wheels' inertia adds to the mass: a time constant of ~1.3 s
        first = float(np.linalg.norm(vehicle.state().linear_velocity[:2]))
        drive(simulation, 0.5, 1.0)
        speed = float(np.linalg.norm(vehicle.state().linear_velocity[:2]))
        joints = p.getJointStates(vehicle.body_id, vehicle._wheel_joints, physicsClientId=vehicle.client)
    finally:
        simulation.close()
    no_load = WHEEL_NO_LOAD * HUSKY_WHEEL_RADIUS
    assert abs(speed - first) < 0.01 * no_load  # topped out
    assert speed < no_load
    for _, spin, _, torque in joints:
        assert 0.0 < abs(torque) < 0.5 * WHEEL_STALL  # a load, but well within the motor
        assert abs(spin) == pytest.approx(WHEEL_NO_LOAD * (1 - abs(torque) / WHEEL_STALL), rel=0.05)
        assert abs(spin) * HUSKY_WHEEL_RADIUS == pytest.approx(speed, rel=0.05)  # rolling, not spinning
