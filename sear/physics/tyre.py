"""The raycast vehicle's tyre and suspension arithmetic as one pure function, compiled with numba.

Why a module of its own: `Vehicle.update` runs per robot per physics step, and as Python float
arithmetic it cost ~95 µs of CPU (72 small calls into the friction solver per step, 14x a Bullet step;
issue 23). The arithmetic needs nothing from pybullet once the wheel rays are cast, so it lives here as
`solve`, a function over flat sequences of floats with plain loops, which numba compiles to machine code
(`@njit(cache=True)`: compiled on the first run that needs it after install, loaded from numba's cache
afterwards). The same function runs as plain Python on lists, where it costs what the old update did.
The two agree to ~1e-12 N (tests/physics/test_tyre_kernel.py compares them on steps recorded from a
demo drive: 6e-13 N at worst, a last-bit difference the solver's sweeps carry along, its source not
traced; the demo's log is byte-identical on both). What the model is and why is in
sear.physics.vehicle's docstring; the pybullet calls (the rays, the chassis state, the forces) stay
there.

Which one runs (`kernels()`): where the install has built them ahead of time (`python -m
sear.physics.tyrebuild`, which `make setup` runs), the compiled kernels from the first update, loaded in a
millisecond without numba. Otherwise loading numba costs more CPU than a short run's updates (~0.4-0.5 s
on the shared development machine, a quarter of a start-up), so a process steps its vehicles as plain
Python first and loads numba's kernels once it has run COMPILE_AFTER updates, when the compiled ones
start paying for themselves. `SEAR_NO_NUMBA=1` (or numba missing) keeps the plain Python path;
`SEAR_NUMBA_AFTER=N` moves the switch (0: compiled from the first update). Only sear.jit (and the
ahead-of-time build, sear.physics.tyrebuild) imports numba, so nothing else pays for it: not the settings
window, `sear validate`, the controller processes, nor worlds without a mesh vehicle.

Layout of the flat arguments (all floats; w = wheel index 0..3 in WHEEL_IDS order, lengths in m,
velocities in m/s and rad/s, forces in N, impulses in N·s):
- `body` (BODY): centre of mass position (3), linear velocity (3), angular velocity (3), then the
  rotation matrix body -> world row by row (9), all world frame;
- `params` (PARAMS): see the P_* indices;
- `wheels` (WHEEL_IN per wheel): see the W_* indices (what the drive inputs fix: radius, ray length,
  sine and cosine of the steering angle, drive force, caster flag: 0 a wheel, BALL_CASTER a ball
  transfer, SWIVEL_CASTER a swivel caster whose wheel's heading is the steering angle);
- `hits` (HIT per wheel): see the H_* indices (contact flag, ray fraction, point, normal);
- `impulses` (2 per wheel): last step's forward and sideways friction impulses, the solver's warm start;
  overwritten with this step's;
- `out` (OUT_BODY + OUT_WHEEL per wheel): the total force (3) and torque (3) to apply at the centre of
  mass, then per wheel the O_* values;
- `work` (WORK per wheel): scratch, contents unused after the call.
`solve` returns 1.0 when the force and torque are finite, 0.0 for a degenerate contact (a zero-length
normal), whose forces the caller skips that step rather than explode.
"""

from __future__ import annotations

import math
import os
import types
from collections.abc import Callable, MutableSequence, Sequence
from pathlib import Path
from typing import Any

from sear.gravity import GRAVITY
from sear.jit import NO_NUMBA_VARIABLE as NO_NUMBA_VARIABLE  # the variable tests and docs name here
from sear.jit import compiled_or_none, numba_wanted

SOLVER_ITERATIONS = 8
"""Projected Gauss-Seidel sweeps over the wheels' friction impulses per step (warm-started from the
last step, so a resting robot's impulses are already right and the sweeps only refine them)."""
ROLL_INFLUENCE = 0.1
"""Bullet's default m_rollInfluence: side forces act this fraction of the way up from the contact."""
WHEELS = 4
"""Wheels per vehicle."""

BODY = 18
"""Floats in `body`: position, velocity, angular velocity (3 each), rotation matrix (9)."""
P_INV_INERTIA, P_MASS, P_STIFFNESS, P_COMPRESSION, P_DAMPING, P_ROLLING, P_FRICTION = 0, 3, 4, 5, 6, 7, 8
P_BRAKE_EACH, P_BRAKING, P_REST, P_SHORTEST, P_LONGEST, P_DT, P_COG = 9, 10, 11, 12, 13, 14, 15
PARAMS = 18
"""Floats in `params`: inverse principal inertia (3, 1/(kg·m²), body frame), chassis mass (kg),
suspension stiffness (1/s²), compression and damping (1/s; all three per kg of mass, as in Bullet),
rolling resistance and friction slip (ratios), brake force per braked wheel (N), braking flag, rest,
shortest and longest suspension length (m), time step (s), centre of mass offset from the body model
origin (3, m, body frame)."""
W_RADIUS, W_LENGTH, W_SIN, W_COS, W_DRIVE, W_CASTER = 0, 1, 2, 3, 4, 5
BALL_CASTER, SWIVEL_CASTER = 1.0, 2.0
"""W_CASTER's values for casters: a ball transfer resists the contact's motion in any direction with rolling
resistance; a swivel caster's wheel, turned by its swivel to the heading the caller gives as its steering
angle, resists rolling along that heading only and takes no force across it (the swivel turns instead)."""
WHEEL_IN = 6
H_CONTACT, H_FRACTION, H_POINT, H_NORMAL = 0, 1, 2, 5
HIT = 8
OUT_BODY = 6
O_CONTACT, O_SUSPENSION, O_FORCE, O_SKID, O_DELTA = 0, 1, 2, 3, 4
OUT_WHEEL = 5
"""Per wheel out: in contact (0/1), suspension length (m), suspension force (N), skid (Bullet's
skidInfo: the share of the wanted friction impulse the tyre delivers), wheel rotation this step (rad;
unused off the ground, where the wheel coasts)."""
WORK = 36
"""Scratch floats per wheel."""

_ROLL_LEVER = 1.0 - ROLL_INFLUENCE
BUMP_STOP_STIFFNESS = 1000.0
"""1/s² per kg of chassis mass, like the suspension stiffness: the stiffness of a wheel's bump stop, the rubber
block a suspension compressed past its travel meets. The stiffest the springs may be (sear.project's
MAX_SUSPENSION_STIFFNESS), so the explicit step stays stable with it: ω²·dt² = 4·(1000 + 1000)/120² = 0.56."""
BUMP_STOP_DAMPING = 15.8
"""1/s per kg of chassis mass: the bump stop's damping, at least this whatever the dampers' setting:
ζ = 15.8/sqrt(1000) = 0.5 on four bump stops (sear.suspension), so a robot that bottoms out comes to rest
rather than ringing on its stops; 8·30·dt = 2 with the stiffness' 0.56 keeps the step stable (< 4)."""


def solve(body: Sequence[float], params: Sequence[float], wheels: Sequence[float], hits: Sequence[float],
          impulses: MutableSequence[float], out: MutableSequence[float], work: MutableSequence[float]) -> float:
    """One physics step of the four wheels: suspension forces, then the friction impulses solved
    together by warm-started projected Gauss-Seidel, summed into one force and torque on the chassis.

    Arguments as the module docstring lays them out. Plain loops over flat sequences: numba compiles
    them to straight machine code, and as plain Python on lists they cost what float arithmetic costs.
    The order of every operation is that of the update it replaced: as Python it gives the old update's
    floats (the demo's log is byte-identical), compiled the same to ~1e-12 N."""
    cx, cy, cz = body[0], body[1], body[2]
    vx, vy, vz = body[3], body[4], body[5]
    wx, wy, wz = body[6], body[7], body[8]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = (body[9], body[10], body[11], body[12], body[13], body[14],
                                                   body[15], body[16], body[17])
    ux, uy, uz = r02, r12, r22  # chassis up, world frame
    ix, iy, iz = params[P_INV_INERTIA], params[P_INV_INERTIA + 1], params[P_INV_INERTIA + 2]
    mass = params[P_MASS]
    stiffness, compression, damping_down = params[P_STIFFNESS], params[P_COMPRESSION], params[P_DAMPING]
    rolling, friction_slip = params[P_ROLLING], params[P_FRICTION]
    brake_each, braking = params[P_BRAKE_EACH], params[P_BRAKING] > 0.0
    rest, shortest, longest, dt = params[P_REST], params[P_SHORTEST], params[P_LONGEST], params[P_DT]
    inv_mass = 1.0 / mass

    # Forces known before friction: gravity, suspension. They set the velocity the step will end with,
    # which the friction impulses then correct.
    fx = fy = fz = tx = ty = tz = 0.0
    for w in range(WHEELS):
        h, o, k = w * HIT, OUT_BODY + w * OUT_WHEEL, w * WORK
        if hits[h + H_CONTACT] == 0.0:
            out[o + O_CONTACT], out[o + O_SUSPENSION], out[o + O_FORCE] = 0.0, rest, 0.0
            out[o + O_SKID], out[o + O_DELTA] = 1.0, 0.0
            impulses[2 * w], impulses[2 * w + 1] = 0.0, 0.0
            continue
        i = w * WHEEL_IN
        radius, length = wheels[i + W_RADIUS], wheels[i + W_LENGTH]
        sin_s, cos_s, drive, caster = wheels[i + W_SIN], wheels[i + W_COS], wheels[i + W_DRIVE], wheels[i + W_CASTER]
        raw = hits[h + H_FRACTION] * length - radius
        susp = min(max(raw, shortest), longest)
        nx, ny, nz = hits[h + H_NORMAL], hits[h + H_NORMAL + 1], hits[h + H_NORMAL + 2]
        rx, ry, rz = hits[h + H_POINT] - cx, hits[h + H_POINT + 1] - cy, hits[h + H_POINT + 2] - cz
        # Contact point velocity: v + w x r.
        px = vx + wy * rz - wz * ry
        py = vy + wz * rx - wx * rz
        pz = vz + wx * ry - wy * rx
        denom = nx * ux + ny * uy + nz * uz
        if denom < 0.1:
            rel_vel, inv_contact = 0.0, 10.0
        else:
            rel_vel, inv_contact = (nx * px + ny * py + nz * pz) / denom, 1.0 / denom
        spring = stiffness * (rest - susp) * inv_contact
        damping = compression if rel_vel < 0 else damping_down
        if raw < shortest:  # bottomed out: the bump stop takes what the spring's travel cannot
            spring += BUMP_STOP_STIFFNESS * (shortest - raw) * inv_contact
            damping = max(damping, BUMP_STOP_DAMPING)
        force = max(0.0, (spring - damping * rel_vel) * mass)
        fx += nx * force
        fy += ny * force
        fz += nz * force
        tx += (ry * nz - rz * ny) * force
        ty += (rz * nx - rx * nz) * force
        tz += (rx * ny - ry * nx) * force

        # Rolling (f) and sideways (a) directions at the contact, in the ground plane.
        ax, ay, az = -r00 * sin_s + r01 * cos_s, -r10 * sin_s + r11 * cos_s, -r20 * sin_s + r21 * cos_s
        dot = ax * nx + ay * ny + az * nz
        ax, ay, az = ax - nx * dot, ay - ny * dot, az - nz * dot
        norm = max(math.sqrt(ax * ax + ay * ay + az * az), 1e-9)
        ax, ay, az = ax / norm, ay / norm, az / norm
        fwx, fwy, fwz = ay * nz - az * ny, az * nx - ax * nz, ax * ny - ay * nx
        norm = max(math.sqrt(fwx * fwx + fwy * fwy + fwz * fwz), 1e-9)
        fwx, fwy, fwz = fwx / norm, fwy / norm, fwz / norm
        # The side force acts ROLL_INFLUENCE of the way up from the contact (Bullet's rollInfluence).
        up_dot = (rx * ux + ry * uy + rz * uz) * _ROLL_LEVER
        kx, ky, kz = rx - ux * up_dot, ry - uy * up_dot, rz - uz * up_dot
        # Per direction: the velocity row (r x d) and the angular response to a unit impulse, the world
        # inverse inertia R · diag(1/I) · Rᵀ times the row (through the body frame, where I is diagonal).
        fvx, fvy, fvz = ry * fwz - rz * fwy, rz * fwx - rx * fwz, rx * fwy - ry * fwx
        lx = (r00 * fvx + r10 * fvy + r20 * fvz) * ix
        ly = (r01 * fvx + r11 * fvy + r21 * fvz) * iy
        lz = (r02 * fvx + r12 * fvy + r22 * fvz) * iz
        fix, fiy, fiz = r00 * lx + r01 * ly + r02 * lz, r10 * lx + r11 * ly + r12 * lz, r20 * lx + r21 * ly + r22 * lz
        svx, svy, svz = ry * az - rz * ay, rz * ax - rx * az, rx * ay - ry * ax
        qx, qy, qz = ky * az - kz * ay, kz * ax - kx * az, kx * ay - ky * ax
        lx = (r00 * qx + r10 * qy + r20 * qz) * ix
        ly = (r01 * qx + r11 * qy + r21 * qz) * iy
        lz = (r02 * qx + r12 * qy + r22 * qz) * iz
        six, siy, siz = r00 * lx + r01 * ly + r02 * lz, r10 * lx + r11 * ly + r12 * lz, r20 * lx + r21 * ly + r22 * lz
        eff_f = 1.0 / (inv_mass + fvx * fix + fvy * fiy + fvz * fiz)
        eff_s = 1.0 / max(inv_mass + svx * six + svy * siy + svz * siz, 1e-12)
        if caster != 0.0:  # rolling resistance only (a ball's in any direction), no brake, no side grip
            limit = rolling * force * dt
            f_limit, circle = limit, min(limit, friction_slip * force * dt)
        else:
            f_limit, circle = (brake_each + rolling * force) * dt, friction_slip * force * dt
        out[o + O_CONTACT], out[o + O_SUSPENSION], out[o + O_FORCE] = 1.0, susp, force
        work[k + 0], work[k + 1], work[k + 2] = fwx, fwy, fwz
        work[k + 3], work[k + 4], work[k + 5] = fvx, fvy, fvz
        work[k + 6], work[k + 7], work[k + 8] = fix, fiy, fiz
        work[k + 9], work[k + 10], work[k + 11] = ax, ay, az
        work[k + 12], work[k + 13], work[k + 14] = svx, svy, svz
        work[k + 15], work[k + 16], work[k + 17] = six, siy, siz
        work[k + 18], work[k + 19], work[k + 20] = kx, ky, kz
        work[k + 21], work[k + 22] = eff_f, eff_s
        work[k + 23] = fwx * px + fwy * py + fwz * pz  # ground speed along the wheel
        work[k + 24], work[k + 25] = f_limit, circle

    # Velocity at the end of the step without friction (semi-implicit Euler, as pybullet steps).
    lx = (r00 * tx + r10 * ty + r20 * tz) * ix
    ly = (r01 * tx + r11 * ty + r21 * tz) * iy
    lz = (r02 * tx + r12 * ty + r22 * tz) * iz
    ax_, ay_, az_ = r00 * lx + r01 * ly + r02 * lz, r10 * lx + r11 * ly + r12 * lz, r20 * lx + r21 * ly + r22 * lz
    lin0, lin1, lin2 = vx + fx * inv_mass * dt, vy + fy * inv_mass * dt, vz + (fz * inv_mass - GRAVITY) * dt
    ang0, ang1, ang2 = wx + ax_ * dt, wy + ay_ * dt, wz + az_ * dt

    # Warm start from last step's impulses, within this step's limits.
    for w in range(WHEELS):
        if hits[w * HIT + H_CONTACT] == 0.0:
            continue
        k = w * WORK
        drive = wheels[w * WHEEL_IN + W_DRIVE]
        f_limit, circle = work[k + 24], work[k + 25]
        f_prev, s_prev = impulses[2 * w], impulses[2 * w + 1]
        f0 = min(max(f_prev, -f_limit), f_limit) if drive == 0.0 else drive * dt
        s0 = 0.0 if wheels[w * WHEEL_IN + W_CASTER] == SWIVEL_CASTER else s_prev
        total = math.hypot(f0, s0)
        if total > circle:
            f0, s0 = f0 * circle / total, s0 * circle / total
        work[k + 26], work[k + 27], work[k + 28] = f0, s0, 1.0
        lin0 += work[k + 0] * f0 * inv_mass
        lin1 += work[k + 1] * f0 * inv_mass
        lin2 += work[k + 2] * f0 * inv_mass
        ang0 += work[k + 6] * f0
        ang1 += work[k + 7] * f0
        ang2 += work[k + 8] * f0
        lin0 += work[k + 9] * s0 * inv_mass
        lin1 += work[k + 10] * s0 * inv_mass
        lin2 += work[k + 11] * s0 * inv_mass
        ang0 += work[k + 15] * s0
        ang1 += work[k + 16] * s0
        ang2 += work[k + 17] * s0
    # Projected Gauss-Seidel over the wheels: each wheel's impulse stops its contact's sliding (sideways
    # always; along the wheel when it is not driven, up to brake + rolling resistance), then the pair is
    # scaled into the friction circle.
    for _ in range(SOLVER_ITERATIONS):
        for w in range(WHEELS):
            if hits[w * HIT + H_CONTACT] == 0.0:
                continue
            k = w * WORK
            drive = wheels[w * WHEEL_IN + W_DRIVE]
            old_f, old_s = work[k + 26], work[k + 27]
            slip_s = (work[k + 9] * lin0 + work[k + 10] * lin1 + work[k + 11] * lin2
                      + work[k + 12] * ang0 + work[k + 13] * ang1 + work[k + 14] * ang2)
            new_s = 0.0 if wheels[w * WHEEL_IN + W_CASTER] == SWIVEL_CASTER else old_s - slip_s * work[k + 22]
            if drive == 0.0:
                slip_f = (work[k + 0] * lin0 + work[k + 1] * lin1 + work[k + 2] * lin2
                          + work[k + 3] * ang0 + work[k + 4] * ang1 + work[k + 5] * ang2)
                f_limit = work[k + 24]
                new_f = min(max(old_f - slip_f * work[k + 21], -f_limit), f_limit)
            else:
                new_f = drive * dt
            total = math.hypot(new_f, new_s)
            skid = 1.0  # Bullet's skidInfo: the share of the wanted impulse the tyre delivers
            circle = work[k + 25]
            if total > circle:
                skid = circle / total
                new_f, new_s = new_f * skid, new_s * skid
            amount = new_f - old_f
            lin0 += work[k + 0] * amount * inv_mass
            lin1 += work[k + 1] * amount * inv_mass
            lin2 += work[k + 2] * amount * inv_mass
            ang0 += work[k + 6] * amount
            ang1 += work[k + 7] * amount
            ang2 += work[k + 8] * amount
            amount = new_s - old_s
            lin0 += work[k + 9] * amount * inv_mass
            lin1 += work[k + 10] * amount * inv_mass
            lin2 += work[k + 11] * amount * inv_mass
            ang0 += work[k + 15] * amount
            ang1 += work[k + 16] * amount
            ang2 += work[k + 17] * amount
            work[k + 26], work[k + 27], work[k + 28] = new_f, new_s, skid

    # The friction impulses as forces over the step, added to the suspension's.
    for w in range(WHEELS):
        h = w * HIT
        if hits[h + H_CONTACT] == 0.0:
            continue
        k, o = w * WORK, OUT_BODY + w * OUT_WHEEL
        forward, side, skid = work[k + 26], work[k + 27], work[k + 28]
        impulses[2 * w], impulses[2 * w + 1] = forward, side
        forward /= dt
        side /= dt
        ex, ey, ez = work[k + 0] * forward, work[k + 1] * forward, work[k + 2] * forward
        sx, sy, sz = work[k + 9] * side, work[k + 10] * side, work[k + 11] * side
        rx, ry, rz = hits[h + H_POINT] - cx, hits[h + H_POINT + 1] - cy, hits[h + H_POINT + 2] - cz
        kx, ky, kz = work[k + 18], work[k + 19], work[k + 20]
        fx += ex + sx
        fy += ey + sy
        fz += ez + sz
        tx += ry * ez - rz * ey + ky * sz - kz * sy
        ty += rz * ex - rx * ez + kz * sx - kx * sz
        tz += rx * ey - ry * ex + kx * sy - ky * sx
        # Wheel spin from the ground speed under the wheel (Bullet), locked when braking into a skid.
        locked = braking and skid < 1.0 and wheels[w * WHEEL_IN + W_DRIVE] == 0.0
        out[o + O_SKID] = skid
        out[o + O_DELTA] = 0.0 if locked else work[k + 23] * dt / wheels[w * WHEEL_IN + W_RADIUS]
    out[0], out[1], out[2], out[3], out[4], out[5] = fx, fy, fz, tx, ty, tz
    finite = (math.isfinite(fx) and math.isfinite(fy) and math.isfinite(fz) and math.isfinite(tx)
              and math.isfinite(ty) and math.isfinite(tz))
    return 1.0 if finite else 0.0


def wheel_rays(body: Sequence[float], params: Sequence[float], hard_points: Sequence[float],
               wheels: Sequence[float], rays: MutableSequence[float]) -> None:
    """The suspension rays of the four wheels, world frame: from each hard point (`hard_points`, 3 per
    wheel, body model frame, m) straight down the chassis by the wheel's ray length (rest length plus
    radius, `wheels`), written to `rays` as 4 starts (3 floats each) then 4 ends."""
    cx, cy, cz = body[0], body[1], body[2]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = (body[9], body[10], body[11], body[12], body[13], body[14],
                                                   body[15], body[16], body[17])
    ux, uy, uz = r02, r12, r22
    gx, gy, gz = params[P_COG], params[P_COG + 1], params[P_COG + 2]
    ox = cx - (r00 * gx + r01 * gy + r02 * gz)  # body model origin, world frame
    oy = cy - (r10 * gx + r11 * gy + r12 * gz)
    oz = cz - (r20 * gx + r21 * gy + r22 * gz)
    for w in range(WHEELS):
        hx, hy, hz = hard_points[3 * w], hard_points[3 * w + 1], hard_points[3 * w + 2]
        length = wheels[w * WHEEL_IN + W_LENGTH]
        sx = ox + r00 * hx + r01 * hy + r02 * hz
        sy = oy + r10 * hx + r11 * hy + r12 * hz
        sz = oz + r20 * hx + r21 * hy + r22 * hz
        rays[3 * w], rays[3 * w + 1], rays[3 * w + 2] = sx, sy, sz
        e = 3 * (WHEELS + w)
        rays[e], rays[e + 1], rays[e + 2] = sx - ux * length, sy - uy * length, sz - uz * length



def solve_many(bodies: Any, params: Any, wheels: Any, hits: Any, impulses: Any, out: Any, work: Any,
               finite: Any) -> None:
    """`solve` for N vehicles in one call: row v of each 2-D float array (`bodies` N x BODY, `params`
    N x PARAMS, `wheels` N x WHEEL_IN·WHEELS, `hits` N x HIT·WHEELS, `impulses` N x 2·WHEELS, `out`
    N x (OUT_BODY + OUT_WHEEL·WHEELS), `work` N x WORK·WHEELS) is vehicle v's argument, and `finite[v]`
    gets its return value.

    Why: a world of 100 robots called `solve` and `wheel_rays` 48,000 times per simulated second, and
    the call of a compiled kernel from Python (unboxing seven arrays) and the Python around it cost
    several times the arithmetic; one call per step for all of them leaves only the loop. Compiled only
    (sear.physics.tyreaot, sear.physics.tyrejit: `batched` binds `solve` to the compiled one), the same
    arithmetic as each vehicle's own call."""
    for v in range(bodies.shape[0]):
        finite[v] = solve(bodies[v], params[v], wheels[v], hits[v], impulses[v], out[v], work[v])


def wheel_rays_many(bodies: Any, params: Any, hard_points: Any, wheels: Any, rays: Any) -> None:
    """`wheel_rays` for N vehicles in one call (rows as in `solve_many`; `hard_points` N x 3·WHEELS,
    `rays` N x 6·WHEELS)."""
    for v in range(bodies.shape[0]):
        wheel_rays(bodies[v], params[v], hard_points[v], wheels[v], rays[v])


def batched(solve_kernel: Callable[..., float], rays_kernel: Callable[..., None]
            ) -> tuple[Callable[..., None], Callable[..., None]]:
    """`solve_many` and `wheel_rays_many` as new functions that call `solve_kernel` and `rays_kernel` (numba
    dispatchers of `solve` and `wheel_rays`) in place of the plain Python ones, for numba to compile: a
    compiled function can only call compiled ones."""
    names = dict(globals(), solve=solve_kernel, wheel_rays=rays_kernel)
    return (types.FunctionType(solve_many.__code__, names, "solve_many"),
            types.FunctionType(wheel_rays_many.__code__, names, "wheel_rays_many"))

AFTER_VARIABLE = "SEAR_NUMBA_AFTER"
"""The number of plain Python vehicle updates after which numba's just-in-time kernels are loaded (0: from
the first update); COMPILE_AFTER when not set. Set, it also passes over the ahead-of-time module
(sear.physics.tyreaot), so tests and benchmarks of numba's kernels get numba's kernels."""
COMPILE_AFTER = 5_000
"""Vehicle updates (robots x physics steps) a process runs as plain Python before it loads numba's
kernels. Measured on the shared 2-core development machine (load average ~3, bytecode compiled, numba's
cache filled): loading numba and the cached kernels in a run (its import, then the numpy support their
first call registers) cost 0.37-0.54 s of CPU timed inside a run (0.7-0.9 s as the difference of whole
0.1 s runs with and without them, README), and each compiled update saves ~100 µs (bench/bench_tyre.py:
median 130.7 µs plain, 29.6 µs compiled): the two meet at 4,000-9,000 updates, and 5,000 (21 s of one
robot at 240 Hz, 1 s of twenty) takes the direct measure of the load. Renting until the price of buying
is paid keeps every run within twice the CPU of the better choice made in hindsight, and short runs (a
start-up, a test) never pay for numba. The switch changes results by no more than the kernels differ,
~1e-12 N: the demo's 20 s log is byte-identical with the switch at 0, at 2,000 and never. (An earlier
20,000 rested on load figures of 2-3 s taken where Python wrote no bytecode, so numba's own import was
compiled again on every run.)"""

Kernels = tuple[Callable[..., float], Callable[..., None]]
BatchKernels = tuple[Callable[..., None], Callable[..., None]]
"""`solve_many` and `wheel_rays_many`, compiled."""


def compile_after() -> int:
    """Plain Python updates before numba's kernels are loaded: `SEAR_NUMBA_AFTER`, else COMPILE_AFTER."""
    try:
        return max(0, int(os.environ.get(AFTER_VARIABLE, "") or COMPILE_AFTER))
    except ValueError:
        return COMPILE_AFTER


_compiled: Kernels | None = None
_tried = False
_batch: BatchKernels | None = None
_batch_tried = False
_plain_updates = 0
_threshold: int | None = None


def compiled_kernels() -> Kernels | None:
    """`solve` and `wheel_rays` compiled by numba (loaded from its cache after the first run), or None
    where numba cannot be imported or `SEAR_NO_NUMBA` is set. Imports numba on the first call only."""
    global _compiled, _tried
    if not numba_wanted():
        return None
    if not _tried:
        _tried = True
        _compiled = compiled_or_none(_compile, "the tyre kernels", "they run as plain Python")
    return _compiled


def _compile() -> Kernels:
    """The kernels compiled (sear.physics.tyrejit) and called once each."""
    from sear.physics.tyrejit import compile_kernels

    compiled = compile_kernels(solve, wheel_rays)
    _call_on_zeros(compiled)
    return compiled


def _call_on_zeros(chosen: Kernels) -> None:
    """Call both kernels once on float arrays of zeros (a unit mass): numba compiles them, or loads them
    from its cache, at the first call, which is then here and not inside a vehicle's update."""
    import numpy as np

    body, params = np.zeros(BODY), np.zeros(PARAMS)
    params[P_MASS] = 1.0
    wheels = np.zeros(WHEEL_IN * WHEELS)
    chosen[0](body, params, wheels, np.zeros(HIT * WHEELS), np.zeros(2 * WHEELS),
              np.zeros(OUT_BODY + OUT_WHEEL * WHEELS), np.zeros(WORK * WHEELS))
    chosen[1](body, params, np.zeros(3 * WHEELS), wheels, np.zeros(6 * WHEELS))


def ahead_of_time_kernels() -> Kernels | None:
    """The kernels of the ahead-of-time module (sear.physics.tyreaot) where it has been built, made the
    process's compiled kernels; None where it has not, where `SEAR_NO_NUMBA` is set, or where
    `SEAR_NUMBA_AFTER` is (which asks for numba's just-in-time kernels after that many updates). Loading
    it imports no numba and costs about a millisecond."""
    global _compiled, _tried
    if os.environ.get(AFTER_VARIABLE, "") or not numba_wanted():
        return None
    from sear.physics import tyreaot

    global _batch, _batch_tried
    ahead = tyreaot.load(Path(__file__))
    if ahead is None:
        return None
    try:
        _call_on_zeros(ahead)
    except Exception:  # a module that loads but does not run: the other paths then
        return None
    _compiled, _tried = ahead, True
    _batch, _batch_tried = tyreaot.load_batched(Path(__file__)), True
    return ahead


def batch_kernels() -> BatchKernels | None:
    """The compiled `solve_many` and `wheel_rays_many` once the process's vehicles use compiled kernels
    (`kernels()`): the ahead-of-time module's, or compiled by numba beside its just-in-time `solve` and
    `wheel_rays`; None while the vehicles step as plain Python (a world then calls each vehicle's own
    kernels), or where they cannot be compiled."""
    global _batch, _batch_tried
    if _compiled is None:
        return None
    if not _batch_tried:
        _batch_tried = True
        compiled = _compiled
        _batch = compiled_or_none(lambda: _compile_batch(compiled), "the batched tyre kernels",
                                  "each vehicle calls its own")
    return _batch


def _compile_batch(compiled: Kernels) -> BatchKernels:
    """`solve_many` and `wheel_rays_many` compiled by numba around numba's `compiled` kernels."""
    from sear.physics.tyrejit import compile_batch

    return compile_batch(*batched(*compiled))


def kernels() -> Kernels:
    """The kernels for a vehicle's next update, counted: the ahead-of-time compiled ones from the first
    update where they have been built (`python -m sear.physics.tyrebuild`; ahead_of_time_kernels); else the
    plain Python ones for the first `compile_after()` updates of the process, numba's just-in-time ones
    after that where numba is wanted and importable."""
    global _plain_updates, _threshold
    if _compiled is not None:
        return _compiled
    if not _tried:
        if _threshold is None:
            _threshold = compile_after()
            ahead = ahead_of_time_kernels()
            if ahead is not None:
                return ahead
        if _plain_updates >= _threshold:
            compiled = compiled_kernels()
            if compiled is not None:
                return compiled
        _plain_updates += 1
    return solve, wheel_rays


def uses_arrays(chosen: Kernels) -> bool:
    """Whether `chosen` are the compiled kernels, which take numpy float arrays (the plain ones take lists)."""
    return _compiled is not None and chosen is _compiled
