"""Casters roll: the differential-drive example robot (sear/data/diffbot: two driven wheels, two swivel
casters with a 2 cm offset in the front slots, or ball transfers) driven straight with equal wheel forces.

A caster passes to the ground only rolling resistance, c_rr times its load, so with drive force F on a
robot of mass m on flat ground it covers d = (F - c_rr * N_casters) t^2 / 2m in t seconds from rest: at
least 90 % of the ideal F t^2 / 2m when c_rr * N_casters <= 0.1 F. A caster that dragged like a fixed
ball (mu times its load) would take most of F; one that held sideways would steer the robot. The casters
together carry at most the robot's weight m g, so c_rr m g bounds what they take."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sear.project import Project

from .helpers import G, run, yaw

EXAMPLE = Path(__file__).resolve().parents[2] / "sear" / "data" / "diffbot" / "diffbot.prj"


AS_SHIPPED = -1.0
"""`_example`'s trail for the example's own casters."""


def _example(make_world, trail: float | None = AS_SHIPPED):
    """The example robot alone on its floor (its code adds the table), its casters swivel casters with
    offset `trail` (m; None: ball transfers; AS_SHIPPED: as the example has them)."""
    project = Project.load(EXAMPLE)
    project.world = None
    if trail != AS_SHIPPED:
        project.dynamics.caster_trail = trail
    return project, make_world(project)


def _steady(world, seconds: float) -> float:
    """Run `seconds` and return how far the robot's origin went, m."""
    start = np.asarray(world.vehicles[0].state().position)
    run(world, seconds)
    return float(np.linalg.norm(np.asarray(world.vehicles[0].state().position)[:2] - start[:2]))


def test_a_swivel_casters_wheel_swings_into_its_travel_as_a_trailing_wheel_does(make_world):
    """A wheel trailing its swivel axis by e that rolls without sliding sideways turns its heading θ at
    dθ/dt = (v/e)·sin(φ − θ) (its contact moves only along the wheel; φ the axis' direction of travel,
    v its speed), so along a straight path the lag δ = φ − θ obeys tan(δ/2) = tan(δ0/2)·exp(−d/e) after
    the axis has gone d. Driven straight, each caster trails; turned across the path (δ0 = 90°) it
    swings back by that law; reversed, it swings round to face the new travel (balanced at first, it
    swings out within 0.5 m, the law's distance from a lag of 180° − 1e-9 rad to 10° at e = 2 cm)."""
    trail = 0.02
    project, world = _example(make_world, trail)
    vehicle = world.vehicles[0]
    casters = [i for i, swivel in enumerate(vehicle._swivels) if swivel is not None]
    assert len(casters) == 2
    run(world, 0.2)
    force = project.dynamics.engine_force
    vehicle.drive(force / 4, force / 4)
    run(world, 0.5)
    assert all(abs(vehicle._swivels[i]) < math.radians(1.0) for i in casters)  # trailing, along the travel
    vehicle._swivels[casters[0]] = math.pi / 2  # turned across its path
    gone = _steady(world, 0.05)
    expected = 2 * math.atan(math.tan(math.pi / 4) * math.exp(-gone / trail))
    assert vehicle._swivels[casters[0]] == pytest.approx(expected, rel=0.05, abs=math.radians(0.5))
    assert expected < math.radians(60)  # the step did swing it a good part of the way
    # Reversed: the robot slows, stops and backs; the casters swing round to face backwards.
    vehicle.drive(-force / 2, -force / 2)
    backed = 0.0
    while _forward_speed(vehicle) > -0.01:
        world.step()
    assert all(abs(abs(vehicle._swivels[i]) - math.pi) > math.radians(90) for i in casters)  # not yet round
    start = np.asarray(vehicle.state().position)
    swing = trail * math.log(math.tan((math.pi - 1e-9) / 2) / math.tan(math.radians(5)))  # 0.48 m
    while backed < swing:
        world.step()
        backed = float(np.linalg.norm(np.asarray(vehicle.state().position)[:2] - start[:2]))
    assert all(abs(abs(vehicle._swivels[i]) - math.pi) < math.radians(10) for i in casters)


def _forward_speed(vehicle) -> float:
    state = vehicle.state()
    x, y, z, w = state.orientation
    heading = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return float(state.linear_velocity[0] * math.cos(heading) + state.linear_velocity[1] * math.sin(heading))


def test_the_example_uses_rolling_casters_in_its_front_slots():
    project = Project.load(EXAMPLE)
    assert project.dynamics.drive_type == "differential"
    assert "caster" in project.wheels["left_front"].file.name and "caster" in project.wheels["right_front"].file.name
    assert project.dynamics.caster_trail == 0.02  # swivel casters with a 2 cm offset, as most small robots'


@pytest.mark.parametrize("trail", [None, AS_SHIPPED], ids=["ball transfers", "swivel casters as shipped"])
def test_equal_forces_hold_the_heading_over_5_m_and_lose_only_rolling_resistance(make_world, trail):
    project, world = _example(make_world, trail)
    vehicle = world.vehicles[0]
    run(world, 0.5)
    start, heading = np.asarray(vehicle.state().position), yaw(world)
    mass = project.dynamics.mass
    force = project.dynamics.engine_force  # N: both sides together
    vehicle.drive(force / 2, force / 2)
    run(world, 2.0)
    travelled = float(np.linalg.norm(np.asarray(vehicle.state().position)[:2] - start[:2]))
    ideal = force * 2.0 ** 2 / (2 * mass)
    # Upper bound of what rolling casters may take: c_rr times the whole weight.
    least = (force - project.dynamics.rolling_resistance * mass * G) * 2.0 ** 2 / (2 * mass)
    assert least >= 0.9 * ideal  # the bound itself meets the 90 % (so the next line asks no less)
    assert travelled >= least - 0.01, (travelled, least, ideal)
    assert travelled <= ideal + 0.01, (travelled, ideal)
    # On to 5 m from the start, the heading held within 2 degrees.
    turned = _turned_over_5_m(world, start, heading)
    assert abs(turned) <= 2.0, turned


def test_a_caster_that_dragged_like_a_fixed_ball_would_fail_the_distance(make_world):
    """Positive control: with the casters' rolling resistance raised to mu / 2 (0.5, the field's maximum;
    a fixed ball drags mu times its load) the same drive falls short of 90 % of F t^2 / 2m."""
    project = Project.load(EXAMPLE)
    project.world = None
    project.dynamics.rolling_resistance = project.dynamics.friction_slip * 0.5
    world = make_world(project)
    vehicle = world.vehicles[0]
    run(world, 0.5)
    start = np.asarray(vehicle.state().position)
    force = project.dynamics.engine_force
    vehicle.drive(force / 2, force / 2)
    run(world, 2.0)
    travelled = float(np.linalg.norm(np.asarray(vehicle.state().position)[:2] - start[:2]))
    assert travelled < 0.9 * force * 2.0 ** 2 / (2 * project.dynamics.mass)


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "urdf.md"
PUSH = 5.0
OFF_DIAGONAL = (3.0, -5.0)
"""m east, north: a start clear of the test plane's diagonal (the edge its two triangles share)."""
"""N: the horizontal push on the URDF robot's base."""


def _guide_robot(folder: Path, make_world, caster_name: str, wheel_speed: float | None = None,
                 start: tuple[float, float] = (0.0, 0.0), swivel: bool = False):
    """The user guide's URDF diffbot (a box base, two wheels, a caster ball on a fixed joint 0.15 m behind
    the base, a bumper and a laser), every "caster" in it (link and joint) renamed `caster_name`, its wheel
    joints' velocity limit `wheel_speed` rad/s (None: the guide's 20), on flat ground at `start` (east,
    north, m). `swivel`: its caster ball replaced by the guide's swivel caster (the guide's second block)."""
    import re

    from .helpers import plane_mesh

    block = re.findall(r"```xml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)[0]
    if swivel:
        ball = re.search(r'  <link name="caster">.*?</link>\n', block, flags=re.S)
        joint = re.search(r'  <joint name="caster_joint".*?</joint>\n', block, flags=re.S)
        assert ball and joint
        block = block.replace(joint.group(0), "").replace(ball.group(0), _guide_swivel_caster())
    assert block.count('velocity="20"') == 2  # the two wheel joints' limits
    if wheel_speed is not None:
        block = block.replace('velocity="20"', f'velocity="{wheel_speed:g}"')
    folder.mkdir()
    (folder / "diffbot.urdf").write_text(block.replace("caster", caster_name), encoding="utf-8")
    plane_mesh(20.0).export(folder / "ground.obj")
    project = Project(name="urdf")
    project.terrain.file = folder / "ground.obj"
    project.body.file = folder / "diffbot.urdf"
    project.body.start_altitude = 0.01
    project.body.start_east, project.body.start_north = start
    project.dynamics.drive_type = "differential"
    project.path = folder / "urdf.prj"
    return project, make_world(project)


def test_the_guides_urdf_diffbot_driven_straight_holds_its_heading_and_loses_only_inertia_and_caster(
        tmp_path, make_world):
    """Equal wheel commands on the guide's diffbot (5 kg): F = 6.1 N, SEAR's proposal (half the grip μ·m·g,
    μ = 0.5·0.5), pushes it F·t²/2m = 2.44 m in 2 s were it a point mass. Its wheels' inertia
    (I = 0.00096 kg·m², r = 0.08 m: m_eff = m + 2·I/r² = 5.3 kg) and the ball transfer's rolling resistance
    (c_rr·N_c, N_c from the moment balance as below) leave (F − c_rr·N_c)·t²/(2·m_eff) = 91 % of it. The
    guide's wheels stop at 20 rad/s (1.6 m/s, reached at 1.5 s): raised to 40 here so the 2 s are all
    acceleration. It starts off the terrain's diagonal (the two triangles' shared edge), whose crossing
    kicks a wheel sideways (pybullet's contact on a mesh's internal edge: ~2° on the way to 5 m)."""
    from sear.physics.urdf import crowned

    wheel_x, ball_x = 0.08, -0.15
    moments = 4.0 * (wheel_x - 0.0) + 0.2 * (wheel_x - 0.2) + 0.1 * (wheel_x - 0.15) + 0.1 * (wheel_x - ball_x)
    load = moments * G / (wheel_x - ball_x)
    mass = 4.0 + 2 * 0.3 + 0.1 + 0.2 + 0.1
    effective = mass + 2 * 0.00096 / 0.08 ** 2
    force, seconds = 0.5 * (0.5 * 0.5) * mass * G, 2.0
    project, world = _guide_robot(tmp_path / "a", make_world, "caster", wheel_speed=40.0, start=OFF_DIAGONAL)
    start, heading = _accelerates_as_computed(world, project, force, seconds, mass, effective, load)
    turned = _turned_over_5_m(world, start, heading)
    assert abs(turned) <= 2.0, turned
    # Its wheels rolled on crowns: the URDF's 4 cm cylinders with a 2 mm band at full radius.
    urdf = (tmp_path / "a" / "diffbot.urdf").read_bytes()
    assert urdf.count(b"<cylinder") + 2 == crowned(urdf, {"left_wheel", "right_wheel"}).count(b"<cylinder")


def _set_off(world, force: float) -> tuple[np.ndarray, float]:
    """After 0.5 s at rest, equal commands of force / 2 N on each side of the URDF diffbot in `world`;
    where it starts from (m) and its heading then (rad)."""
    vehicle = world.vehicles[0]
    vehicle.dynamics.engine_force = force
    run(world, 0.5)
    start, heading = np.asarray(vehicle.state().position), yaw(world)
    vehicle.drive(force / 2, force / 2)
    return start, heading


def _accelerates_as_computed(world, project, force: float, seconds: float, mass: float, effective: float,
                             load: float) -> tuple[np.ndarray, float]:
    """Set off (_set_off) and drive `seconds` s: the distance is at least 90 % of F·t²/2m (`mass` kg) and
    within 3 % of (F − c_rr·N_c)·t²/(2·m_eff) (`effective` kg, the caster's load N_c `load` N). Where it
    set off from, and its heading then."""
    start, heading = _set_off(world, force)
    run(world, seconds)
    travelled = float(np.linalg.norm(np.asarray(world.vehicles[0].state().position)[:2] - start[:2]))
    ideal = force * seconds ** 2 / (2 * mass)
    expected = (force - project.dynamics.rolling_resistance * load) * seconds ** 2 / (2 * effective)
    assert expected >= 0.9 * ideal  # the model's own figure meets the 90 %
    assert travelled >= 0.9 * ideal, (travelled, ideal)
    assert travelled == pytest.approx(expected, rel=0.03)
    return start, heading


def _turned_over_5_m(world, start: np.ndarray, heading: float) -> float:
    """Degrees the robot in `world` has turned from `heading` once 5 m from `start` (stepped there)."""
    steps = 0
    while np.linalg.norm(np.asarray(world.vehicles[0].state().position)[:2] - start[:2]) < 5.0:
        world.step()
        steps += 1
        assert steps < 30 / world.dt, "the robot did not cover 5 m in 30 s"
    return math.degrees(math.remainder(yaw(world) - heading, 2 * math.pi))


def _pushed(world, seconds: float) -> tuple[float, float]:
    """Distance (m) the robot's base goes while pushed forwards by PUSH at its base's centre of mass, and
    how far it turned (deg)."""
    import pybullet as p

    vehicle = world.vehicles[0]
    run(world, 0.5)
    start, heading = np.asarray(vehicle.state().position), yaw(world)
    for _ in range(round(seconds / world.dt)):
        centre, _ = p.getBasePositionAndOrientation(vehicle.body_id, physicsClientId=world.client)
        p.applyExternalForce(vehicle.body_id, -1, (PUSH, 0.0, 0.0), centre, p.WORLD_FRAME,
                             physicsClientId=world.client)
        world.step()
    travelled = float(np.linalg.norm(np.asarray(vehicle.state().position)[:2] - start[:2]))
    return travelled, math.degrees(math.remainder(yaw(world) - heading, 2 * math.pi))


def test_a_urdf_caster_ball_rolls_against_rolling_resistance_only(tmp_path, make_world):
    """The guide's robot pushed for 2 s, its caster a ball transfer, against the same robot whose ball
    (renamed 'ball', so SEAR leaves it alone) is made frictionless by the test: the ball transfer takes
    c_rr·N_c more, N_c the ball's load from the moment balance about the wheels' contact line (the guide's
    masses: base 4 kg at x = 0, bumper 0.2 kg at 0.2, laser 0.1 kg at 0.15, ball 0.1 kg at -0.15, wheels
    0.3 kg each on the line at x = 0.08), so it lags by c_rr·N_c·t²/(2·m_eff), m_eff the mass plus each
    wheel's I/r² (0.00096 kg·m² at r = 0.08 m). A ball with the URDF's friction drags far more."""
    import pybullet as p

    wheel_x, ball_x = 0.08, -0.15
    moments = 4.0 * (wheel_x - 0.0) + 0.2 * (wheel_x - 0.2) + 0.1 * (wheel_x - 0.15) + 0.1 * (wheel_x - ball_x)
    load = moments * G / (wheel_x - ball_x)  # N on the ball
    mass = 4.0 + 2 * 0.3 + 0.1 + 0.2 + 0.1
    effective = mass + 2 * 0.00096 / 0.08 ** 2
    # Off the terrain's diagonal, whose crossing kicks a wheel sideways (see the test above).
    rolling, rolled_turn = _pushed(_guide_robot(tmp_path / "a", make_world, "caster", start=OFF_DIAGONAL)[1], 2.0)
    project, world = _guide_robot(tmp_path / "b", make_world, "ball", start=OFF_DIAGONAL)
    ball = world.vehicles[0].link_index["ball"]
    p.changeDynamics(world.vehicles[0].body_id, ball, lateralFriction=0.0, physicsClientId=world.client)
    frictionless, _ = _pushed(world, 2.0)
    lag = project.dynamics.rolling_resistance * load * 2.0 ** 2 / (2 * effective)
    # Within 35 %: the ball's contact chatters under the push (its load swings between 0 and 1.4 times its
    # mean, 13.3 N at rest as computed here), and the resistance follows the last step's load; it was 24 %
    # short when written.
    assert abs((frictionless - rolling) - lag) <= 0.35 * lag, (frictionless - rolling, lag)
    assert abs(rolled_turn) <= 2.0, rolled_turn
    # The positive control: the same ball with the URDF's friction (a fixed ball that slides).
    fixed, _ = _pushed(_guide_robot(tmp_path / "c", make_world, "ball", start=OFF_DIAGONAL)[1], 2.0)
    assert fixed < rolling - 5 * lag, (fixed, rolling, lag)


def _guide_swivel_caster() -> str:
    """The guide's swivel caster: a fork on a continuous vertical joint 0.15 m behind the base's middle and a
    wheel (r = 0.025 m) on a continuous joint 0.03 m behind the fork's axis."""
    import re

    return re.findall(r"```xml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)[1]


def test_a_urdf_swivel_caster_is_recognised_by_its_shape_not_its_name(tmp_path):
    """The guide's swivel caster (a free vertical joint, below it a free wheel joint trailing its axis) is
    neither a proposed wheel nor a steering joint, whatever its joints are called; a limited (steering)
    vertical joint above a trailing wheel, and a free vertical joint above a wheel on its axis (no trail),
    are no caster."""
    import re

    from sear.models.robotdesc.parse import load_urdf
    from sear.models.robotdesc.wheels import propose_wheels, swivel_casters

    block = re.findall(r"```xml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)[0]
    ball = re.search(r'  <link name="caster">.*?</link>\n', block, flags=re.S)
    joint = re.search(r'  <joint name="caster_joint".*?</joint>\n', block, flags=re.S)
    assert ball and joint
    urdf = block.replace(joint.group(0), "").replace(ball.group(0), _guide_swivel_caster())
    for name, text in [("named", urdf), ("renamed", urdf.replace("caster", "rear"))]:
        path = tmp_path / f"{name}.urdf"
        path.write_text(text, encoding="utf-8")
        desc = load_urdf(path)
        proposal = propose_wheels(desc)
        prefix = "caster" if name == "named" else "rear"
        assert swivel_casters(desc) == ((f"{prefix}_swivel", f"{prefix}_wheel_joint"),), name
        assert [w.joint for w in proposal.wheels] == ["left_wheel_joint", "right_wheel_joint"], name
        assert proposal.steering == (), name
    # Controls: a wheel under a limited (steering) joint, or on the swivel's axis, is no caster.
    steered = urdf.replace("caster", "rear").replace(
        '<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/><limit lower="-0.5" upper="0.5" effort="5" velocity="2"/>')
    steered = steered.replace('name="rear_swivel" type="continuous"', 'name="rear_swivel" type="revolute"')
    (tmp_path / "steered.urdf").write_text(steered, encoding="utf-8")
    desc = load_urdf(tmp_path / "steered.urdf")
    assert swivel_casters(desc) == ()
    centred = urdf.replace('<origin xyz="-0.03 0 -0.025"/>', '<origin xyz="0 0 -0.025"/>')
    (tmp_path / "centred.urdf").write_text(centred, encoding="utf-8")
    assert swivel_casters(load_urdf(tmp_path / "centred.urdf")) == ()


def _swivel_angle(vehicle) -> float:
    """The swivel caster's fork angle, rad in (-π, π]: 0 trailing behind its axis, ±π leading ahead of it."""
    import pybullet as p

    (swivel, _, _), = vehicle.swivel_casters
    return math.remainder(p.getJointState(vehicle.body_id, swivel, physicsClientId=vehicle.client)[0], 2 * math.pi)


def test_a_urdf_robot_on_a_swivel_caster_drives_straight_and_its_caster_swings_round_when_it_backs(
        tmp_path, make_world):
    """The guide's diffbot on its swivel caster (5 kg, as on the ball): F = 6.1 N (half the grip μ·m·g,
    μ = 0.5·0.5) pushes it F·t²/2m = 2.44 m in 2 s were it a point mass. The drive wheels' and the caster
    wheel's inertia (m_eff = m + Σ I/r²) and the caster's rolling resistance c_rr·N_c (N_c from the moment
    balance about the wheels' contact line, the caster wheel trailing at x = -0.18) leave
    (F − c_rr·N_c)·t²/(2·m_eff) of it, over 90 % (its wheel joints' velocity limit raised to 40 rad/s as in
    the ball's test, so that the 2 s are all acceleration). With the guide's own limit (20 rad/s, 1.6 m/s),
    equal commands drive it 5 m within 2° of the heading: pushed on by equal forces past 2.5 m/s, its centre
    of mass 6 cm behind its axle makes it a Chaplygin sleigh running backwards, whose heading error grows as
    exp(λt), λ ≈ 2/s per m/s, on a ball transfer as on this caster (docs/project-format.md, Casters);
    then backed,
    the caster, trailing at first, swings round to lead (a trailing wheel's lag δ obeys
    tan(δ/2) = tan(δ0/2)·exp(−d/e) as its axis goes d, e = 3 cm its trail: from 1e-9 rad off balance to
    within 10° of round in 0.69 m)."""
    wheel_x, fork_x, caster_x, trail = 0.08, -0.15, -0.18, 0.03
    masses = [(4.0, 0.0), (0.2, 0.2), (0.1, 0.15), (0.05, fork_x), (0.05, caster_x)]
    load = sum(m * (wheel_x - x) for m, x in masses) * G / (wheel_x - caster_x)
    mass = sum(m for m, _ in masses) + 2 * 0.3
    effective = mass + 2 * 0.00096 / 0.08 ** 2 + 0.0000156 / 0.025 ** 2
    force, seconds = 0.5 * (0.5 * 0.5) * mass * G, 2.0
    project, world = _guide_robot(tmp_path / "a", make_world, "caster", wheel_speed=40.0, start=OFF_DIAGONAL,
                                  swivel=True)
    vehicle = world.vehicles[0]
    assert len(vehicle.swivel_casters) == 1 and len(vehicle.drive_model.driven) == 2
    assert vehicle.total_mass == pytest.approx(mass)
    start, heading = _accelerates_as_computed(world, project, force, seconds, mass, effective, load)
    assert abs(_swivel_angle(vehicle)) < math.radians(2)  # trailing
    # The guide's robot as it is (top speed 1.6 m/s): 5 m straight.
    project, world = _guide_robot(tmp_path / "b", make_world, "caster", start=OFF_DIAGONAL, swivel=True)
    vehicle = world.vehicles[0]
    start, heading = _set_off(world, force)
    turned = _turned_over_5_m(world, start, heading)
    assert abs(turned) <= 2.0, turned
    # Backed: it slows, stops and backs; the caster swings round to lead.
    vehicle.drive(-force / 2, -force / 2)
    while _forward_speed(vehicle) > -0.01:
        world.step()
    assert abs(_swivel_angle(vehicle)) < math.radians(90)  # not yet round
    swing = trail * math.log(math.tan((math.pi - 1e-9) / 2) / math.tan(math.radians(5)))
    back = np.asarray(vehicle.state().position)
    while np.linalg.norm(np.asarray(vehicle.state().position)[:2] - back[:2]) < swing:
        world.step()
    assert abs(abs(_swivel_angle(vehicle)) - math.pi) < math.radians(10), math.degrees(_swivel_angle(vehicle))
