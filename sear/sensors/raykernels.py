"""The per-ray arithmetic of an Embree cast (sear.sensors.embreescene) as plain loops, which numba compiles.

numpy spends ~30 µs on every whole-array operation of a 28,800-ray batch and a few µs on each call however
small the batch: refining Embree's hits in float64 and picking the rays near the moving bodies took ~2/3
of a sample's CPU beside Embree's own (issue 23), and moving a depth camera's 100,000 rays into the world
frame with numpy's matmul (OpenBLAS, whose threads wait for a core on a busy machine) ~10 ms. These
functions do the same arithmetic, in the same order, ray by ray in one pass each; numba compiles them
(`load`), and their results are the same to the bit as the numpy code kept in sear.sensors.embreescene
and sear.sensors.raycast, but for `to_world`'s (see there). The numpy code runs until a process has cast
enough rays to pay for loading numba (`count`), and where numba is missing or `SEAR_NO_NUMBA` is set
(tests/sensors/test_raykernels.py holds the two to each other). numba emits no fused multiply-adds unless
told to (fastmath), so each product and sum rounds as numpy's does; each dot product of three terms is
summed as numpy's einsum("ij,ij->i") sums them, (a0 b0 + a2 b2) + a1 b1.

Where it takes `rays`, a kernel works on starts[rays[i]], direction[rays[i]]: the caller's arrays are
not gathered first. Distances along a ray are fractions t of its direction (its full length at t = 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from sear.jit import compiled_or_none, numba_wanted


def to_world(local_starts: np.ndarray, local_ends: np.ndarray, rotation: np.ndarray, position: np.ndarray,
             starts: np.ndarray, ends: np.ndarray, direction: np.ndarray) -> None:
    """Rays given in a body's frame ((N, 3) starts and ends, m) in the world frame: starts, ends and
    direction (end - start) written into the (N, 3) outputs; `rotation` (3, 3) and `position` (3,) m are
    the body's pose. numpy's matmul (OpenBLAS) sums with fused multiply-adds, these without: a coordinate
    may differ from the numpy path's by an ulp (~1e-15 m), the one difference between the two paths."""
    r00, r01, r02 = rotation[0, 0], rotation[0, 1], rotation[0, 2]
    r10, r11, r12 = rotation[1, 0], rotation[1, 1], rotation[1, 2]
    r20, r21, r22 = rotation[2, 0], rotation[2, 1], rotation[2, 2]
    p0, p1, p2 = position[0], position[1], position[2]
    for i in range(len(local_starts)):
        x, y, z = local_starts[i, 0], local_starts[i, 1], local_starts[i, 2]
        s0 = (r00 * x + r01 * y + r02 * z) + p0
        s1 = (r10 * x + r11 * y + r12 * z) + p1
        s2 = (r20 * x + r21 * y + r22 * z) + p2
        x, y, z = local_ends[i, 0], local_ends[i, 1], local_ends[i, 2]
        e0 = (r00 * x + r01 * y + r02 * z) + p0
        e1 = (r10 * x + r11 * y + r12 * z) + p1
        e2 = (r20 * x + r21 * y + r22 * z) + p2
        starts[i, 0], starts[i, 1], starts[i, 2] = s0, s1, s2
        ends[i, 0], ends[i, 1], ends[i, 2] = e0, e1, e2
        direction[i, 0], direction[i, 1], direction[i, 2] = e0 - s0, e1 - s1, e2 - s2


def prepare(starts: np.ndarray, direction: np.ndarray, rays: np.ndarray, begin: np.ndarray, fraction: np.ndarray,
            centre: np.ndarray, origins: np.ndarray, directions: np.ndarray, dists: np.ndarray) -> None:
    """Embree's float32 input for a pass: each ray's origin at t = begin relative to the scene's `centre`
    (m), its direction, and how far it looks (t, up to the hit kept so far in `fraction`), written into
    `origins` (K, 3), `directions` (K, 3) and `dists` (K,)."""
    for i in range(len(rays)):
        r = rays[i]
        b = begin[i]
        for k in range(3):
            dk = direction[r, k]
            origins[i, k] = (starts[r, k] + dk * b) - centre[k]
            directions[i, k] = dk
        dists[i] = fraction[r] - b


def refine(prim: np.ndarray, tfar: np.ndarray, have_tfar: bool, rays: np.ndarray, begin: np.ndarray,
           starts: np.ndarray, direction: np.ndarray, face_normal: np.ndarray, face_corner: np.ndarray,
           face_shape: np.ndarray, face_length: np.ndarray, face_inverse_length: np.ndarray, margins: np.ndarray,
           solid: np.ndarray, bodies: np.ndarray, any_margin: bool, any_solid: bool, passes: bool,
           fraction: np.ndarray, normal: np.ndarray, body: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One pass of TriangleScene.cast after Embree: each hit (prim[i] >= 0, the triangle Embree found for
    ray rays[i]) recomputed in float64 on the plane of its triangle and kept in fraction/normal/body when
    nearer than what they hold.

    Returns (need, next_rays, next_begin, stopped). `need`: the passes' positions i whose hit needs
    Embree's own distance (tfar[i], t from `begin`) because the plane gives none in [0, 1]; when any
    does and `have_tfar` is False, nothing is kept and the caller calls again with tfar. `next_rays`,
    `next_begin`: the rays that pass a solid's face seen from behind (with `passes`) and where (t) their
    next pass starts, 10 µm beyond it; `stopped`: without `passes`, the rays that met such a face."""
    n = len(rays)
    value = np.empty(n)  # a front hit's t on its plane; a passed face's t on its plane
    kind = np.zeros(n, dtype=np.int8)  # 0: no hit, 1: a front hit, 2: a face passed; +2: needs Embree's t
    seen_behind = np.zeros(n, dtype=np.bool_)
    need = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        f = prim[i]
        if f < 0:
            continue
        r = rays[i]
        n0, n1, n2 = face_normal[f, 0], face_normal[f, 1], face_normal[f, 2]
        facing = (n0 * direction[r, 0] + n2 * direction[r, 2]) + n1 * direction[r, 1]
        plane = ((n0 * (face_corner[f, 0] - starts[r, 0]) + n2 * (face_corner[f, 2] - starts[r, 2]))
                 + n1 * (face_corner[f, 1] - starts[r, 1]))
        behind = facing > 0.0
        seen_behind[i] = behind
        shape = face_shape[f]
        if any_solid and behind and solid[shape]:
            value[i] = plane / facing
            kind[i] = 2
            wanted = passes and not math.isfinite(value[i])
        else:
            if any_margin:
                margin = margins[shape]
                offset = margin * face_length[f] if (not behind and margin > 0.0) else 0.0
                value[i] = (plane + offset) / facing
            else:
                value[i] = plane / facing
            kind[i] = 1
            wanted = not (math.isfinite(value[i]) and 0.0 <= value[i] <= 1.0)
        if wanted:
            kind[i] += 2
            need[count] = i
            count += 1
    if count and not have_tfar:
        empty = np.empty(0, dtype=np.int64)
        return need[:count], empty, np.empty(0), empty
    next_rays = np.empty(n, dtype=np.int64)
    next_begin = np.empty(n)
    stopped = np.empty(n, dtype=np.int64)
    ahead = 0
    halted = 0
    for i in range(n):
        if kind[i] == 0:
            continue
        r = rays[i]
        t = value[i] if kind[i] < 3 else begin[i] + np.float64(tfar[i])
        if kind[i] % 2 == 0:  # a solid's face seen from behind
            if passes:
                d0, d1, d2 = direction[r, 0], direction[r, 1], direction[r, 2]
                step = 1e-5 / max(math.sqrt((d0 * d0 + d2 * d2) + d1 * d1), 1e-12)
                start = max(t, begin[i]) + step
                if start < fraction[r]:
                    next_rays[ahead] = r
                    next_begin[ahead] = start
                    ahead += 1
            else:
                stopped[halted] = r
                halted += 1
        elif t < fraction[r]:
            f = prim[i]
            fraction[r] = t
            # A face seen from behind (the terrain's underside): its normal turned round.
            inverse = -face_inverse_length[f] if seen_behind[i] else face_inverse_length[f]
            for k in range(3):
                normal[r, k] = face_normal[f, k] * inverse
            body[r] = bodies[face_shape[f]]
    return np.empty(0, dtype=np.int64), next_rays[:ahead], next_begin[:ahead], stopped[:halted]


def moving_refine(prim: np.ndarray, tfar: np.ndarray, rays: np.ndarray, begin: np.ndarray, starts: np.ndarray,
                  direction: np.ndarray, face_normal: np.ndarray, face_corner: np.ndarray,
                  face_inverse_length: np.ndarray, face_shape: np.ndarray, is_box: np.ndarray, skip: np.ndarray,
                  ray_group: np.ndarray, box_rotation: np.ndarray, box_centre: np.ndarray, box_half: np.ndarray,
                  bodies: np.ndarray, fraction: np.ndarray, normal: np.ndarray, body: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass of MovingScene.cast after Embree (prim[i], tfar[i]: the triangle and distance from `begin`
    Embree found for ray rays[i]): a hull's hit on the plane of its triangle, a box's by the slab test
    against the true box in its frame, kept in fraction/normal/body when nearer. Parts in `skip` (the
    caster's own robot: skip[g, part] for the rays r of caster g = ray_group[r], so that one call serves
    every robot's rays) and faces seen from behind are passed. Returns (grazes, next_rays, next_begin):
    the rays that met a box's GRAZE margin from outside but missed the box, and the rays that go on, with
    where (t) their next pass starts, 10 µm beyond what they passed."""
    n = len(rays)
    grazes = np.empty(n, dtype=np.int64)
    next_rays = np.empty(n, dtype=np.int64)
    next_begin = np.empty(n)
    grazed = 0
    ahead = 0
    for i in range(n):
        f = prim[i]
        if f < 0:
            continue
        r = rays[i]
        shape = face_shape[f]
        d0, d1, d2 = direction[r, 0], direction[r, 1], direction[r, 2]
        embree_t = begin[i] + np.float64(tfar[i])
        t = np.inf
        m0 = m1 = m2 = 0.0
        passing = skip[ray_group[r], shape]
        graze = False
        n0, n1, n2 = face_normal[f, 0], face_normal[f, 1], face_normal[f, 2]
        if not passing and not is_box[shape]:
            facing = (n0 * d0 + n2 * d2) + n1 * d1
            exact = (((n0 * (face_corner[f, 0] - starts[r, 0]) + n2 * (face_corner[f, 2] - starts[r, 2]))
                      + n1 * (face_corner[f, 1] - starts[r, 1])) / facing)
            t = exact if (math.isfinite(exact) and 0.0 <= exact <= 1.0) else embree_t
            inverse = face_inverse_length[f]
            m0, m1, m2 = n0 * inverse, n1 * inverse, n2 * inverse
            if not facing < 0.0:
                passing = True
        elif not passing:
            v0 = starts[r, 0] - box_centre[shape, 0]
            v1 = starts[r, 1] - box_centre[shape, 1]
            v2 = starts[r, 2] - box_centre[shape, 2]
            enter = 0.0
            leave = 0.0
            axis = 0
            sign = 0.0
            for k in range(3):
                a0, a1, a2 = box_rotation[shape, 0, k], box_rotation[shape, 1, k], box_rotation[shape, 2, k]
                local_start = (a0 * v0 + a1 * v1) + a2 * v2
                local_d = (a0 * d0 + a1 * d1) + a2 * d2
                inverse = 1.0 / (1e-300 if local_d == 0.0 else local_d)
                half = box_half[shape, k]
                t1 = (-half - local_start) * inverse
                t2 = (half - local_start) * inverse
                near_t, far_t = min(t1, t2), max(t1, t2)
                if k == 0 or near_t > enter:
                    enter = near_t
                    axis = k
                    sign = -(1.0 if local_d > 0.0 else -1.0 if local_d < 0.0 else 0.0)
                leave = far_t if k == 0 else min(leave, far_t)
            meets = enter <= leave and enter >= 0.0
            inside = enter < 0.0 and leave >= 0.0
            if meets:
                t = enter
                m0 = box_rotation[shape, 0, axis] * sign
                m1 = box_rotation[shape, 1, axis] * sign
                m2 = box_rotation[shape, 2, axis] * sign
            entering = (n0 * d0 + n2 * d2) + n1 * d1 < 0.0
            graze = not meets and not inside and entering
            if not meets and not graze:
                passing = True
        if graze:
            grazes[grazed] = r
            grazed += 1
        elif not passing:
            if t < fraction[r]:
                fraction[r] = t
                normal[r, 0], normal[r, 1], normal[r, 2] = m0, m1, m2
                body[r] = bodies[shape]
        else:
            step = 1e-5 / max(math.sqrt((d0 * d0 + d1 * d1) + d2 * d2), 1e-12)
            start = max(embree_t, begin[i]) + step
            if start < fraction[r]:
                next_rays[ahead] = r
                next_begin[ahead] = start
                ahead += 1
    return grazes[:grazed], next_rays[:ahead], next_begin[:ahead]


def near_boxes(starts: np.ndarray, direction: np.ndarray, reach: np.ndarray, lows: np.ndarray,
               highs: np.ndarray) -> np.ndarray:
    """Indices of the rays whose segment from t = 0 to t = reach crosses any of the boxes lows[b]..highs[b]
    ((B, 3), m): the slab test of sear.sensors.embreescene.near_boxes, ray by ray, with the same
    arithmetic (a zero direction component taken as 1e-30)."""
    n = len(starts)
    near = np.empty(n, dtype=np.int64)
    count = 0
    # The boxes near any of the rays first (clear of the box around every segment, widened by twice the
    # micrometre of each segment's own box below, a box is clear of each segment's): with 100 robots a
    # sensor's rays would otherwise meet the 99 other robots' boxes one by one, ray by ray.
    u0, u1, u2 = math.inf, math.inf, math.inf
    v0, v1, v2 = -math.inf, -math.inf, -math.inf
    for r in range(n):
        s0, s1, s2 = starts[r, 0], starts[r, 1], starts[r, 2]
        e0, e1, e2 = s0 + direction[r, 0] * reach[r], s1 + direction[r, 1] * reach[r], s2 + direction[r, 2] * reach[r]
        u0, v0 = min(u0, s0, e0), max(v0, s0, e0)
        u1, v1 = min(u1, s1, e1), max(v1, s1, e1)
        u2, v2 = min(u2, s2, e2), max(v2, s2, e2)
    kept = np.empty(len(lows), dtype=np.int64)
    boxes = 0
    for b in range(len(lows)):
        if (lows[b, 0] <= v0 + 2e-6 and highs[b, 0] >= u0 - 2e-6 and lows[b, 1] <= v1 + 2e-6
                and highs[b, 1] >= u1 - 2e-6 and lows[b, 2] <= v2 + 2e-6 and highs[b, 2] >= u2 - 2e-6):
            kept[boxes] = b
            boxes += 1
    for r in range(n if boxes else 0):
        s0, s1, s2 = starts[r, 0], starts[r, 1], starts[r, 2]
        d0, d1, d2 = direction[r, 0], direction[r, 1], direction[r, 2]
        # The box around the segment (a micrometre larger than rounding could make it): boxes clear of it
        # are clear of the segment, without the slab test's three divisions.
        e0, e1, e2 = s0 + d0 * reach[r], s1 + d1 * reach[r], s2 + d2 * reach[r]
        lo0, hi0 = min(s0, e0) - 1e-6, max(s0, e0) + 1e-6
        lo1, hi1 = min(s1, e1) - 1e-6, max(s1, e1) + 1e-6
        lo2, hi2 = min(s2, e2) - 1e-6, max(s2, e2) + 1e-6
        clear = True
        for k in range(boxes):
            b = kept[k]
            if (lows[b, 0] <= hi0 and highs[b, 0] >= lo0 and lows[b, 1] <= hi1 and highs[b, 1] >= lo1
                    and lows[b, 2] <= hi2 and highs[b, 2] >= lo2):
                clear = False
                break
        if clear:
            continue
        i0 = 1.0 / (1e-30 if d0 == 0.0 else d0)
        i1 = 1.0 / (1e-30 if d1 == 0.0 else d1)
        i2 = 1.0 / (1e-30 if d2 == 0.0 else d2)
        for k in range(boxes):
            b = kept[k]
            t1 = (lows[b, 0] - s0) * i0
            t2 = (highs[b, 0] - s0) * i0
            enter = max(0.0, min(t1, t2))
            leave = min(reach[r], max(t1, t2))
            t1 = (lows[b, 1] - s1) * i1
            t2 = (highs[b, 1] - s1) * i1
            enter = max(enter, min(t1, t2))
            leave = min(leave, max(t1, t2))
            t1 = (lows[b, 2] - s2) * i2
            t2 = (highs[b, 2] - s2) * i2
            enter = max(enter, min(t1, t2))
            leave = min(leave, max(t1, t2))
            if enter <= leave:
                near[count] = r
                count += 1
                break
    return near[:count]


def camera_points(fraction: np.ndarray, normal: np.ndarray, reach: tuple[np.ndarray, np.ndarray, np.ndarray],
                  rotation: np.ndarray, origin: np.ndarray, sun: np.ndarray, lift: float, sun_reach: np.ndarray,
                  shadows: bool, x: np.ndarray, y: np.ndarray, light: np.ndarray, towards: np.ndarray,
                  begin: np.ndarray, end: np.ndarray) -> int:
    """An RGB camera's hits (sear.sensors.rgb_camera) in the world frame: each ray's hit point x, y (N,)
    from the fractions (N,) of its body-frame `reach` (three (N,) columns, m) turned by `rotation` (3, 3)
    from `origin` (3,) m; the cosine of each surface's `normal` (N, 3) with the unit vector `sun` (3,),
    floored at 0, into `light` (N,) float32; and with `shadows`, for each ray that hit a surface facing
    the sun, its index into `towards` and its shadow ray (from `lift` m off the surface along its normal
    to `sun_reach` (3,) m beyond) into `begin` and `end` (K, 3). Returns K. The arithmetic, in its order,
    of the camera's numpy path."""
    rx, ry, rz = reach
    count = 0
    for i in range(len(fraction)):
        f = fraction[i]
        xi = (rx[i] * rotation[0, 0] + ry[i] * rotation[0, 1] + rz[i] * rotation[0, 2]) * f + origin[0]
        yi = (rx[i] * rotation[1, 0] + ry[i] * rotation[1, 1] + rz[i] * rotation[1, 2]) * f + origin[1]
        x[i], y[i] = xi, yi
        n0, n1, n2 = normal[i, 0], normal[i, 1], normal[i, 2]
        facing = (n0 * sun[0] + n1 * sun[1]) + n2 * sun[2]
        light[i] = np.float32(max(facing, 0.0))
        if shadows and f < 1.0 and facing > 0.0:
            zi = (rx[i] * rotation[2, 0] + ry[i] * rotation[2, 1] + rz[i] * rotation[2, 2]) * f + origin[2]
            b0, b1, b2 = xi + n0 * lift, yi + n1 * lift, zi + n2 * lift
            begin[count, 0], begin[count, 1], begin[count, 2] = b0, b1, b2
            end[count, 0], end[count, 1], end[count, 2] = b0 + sun_reach[0], b1 + sun_reach[1], b2 + sun_reach[2]
            towards[count] = i
            count += 1
    return count


def camera_shade(fraction: np.ndarray, body: np.ndarray, x: np.ndarray, y: np.ndarray, light: np.ndarray,
                 scale: np.float32, offset: np.float32, palette: np.ndarray, terrain_body: int, first_cell: int,
                 low: np.ndarray, inverse_size: np.ndarray, cells: int, unit: tuple[np.ndarray, np.ndarray, np.ndarray],
                 up: np.ndarray, horizon: np.ndarray, rise: np.ndarray, noise: np.ndarray, image: np.ndarray) -> None:
    """An RGB camera's pixels (sear.sensors.rgb_camera) into `image` (N, 3) uint8: a hit's colour (row
    `body` of the float32 `palette`, or for the terrain (`terrain_body`, -1 for none) row first_cell + its
    cell of the `cells` × `cells` raster from `low` (2,) m, cells 1 / `inverse_size` (2,) m wide) times
    light × scale + offset (float32); a miss the sky, `horizon` + `rise` × how far its body-frame `unit`
    direction (three (N,) float32 columns) rises along the world's `up` (3,) float32, clipped to 0..1;
    plus `noise` (N, 3) float32 when it has rows; rounded half to even and clipped to 0..255. The
    arithmetic, in float32 and its order, of the camera's numpy path."""
    ux, uy, uz = unit
    noisy = len(noise) > 0
    for i in range(len(fraction)):
        if fraction[i] < 1.0:
            row = body[i]
            if row == terrain_body:
                v = (x[i] - low[0]) * inverse_size[0]
                a = 0 if v < 0.0 else (cells - 1 if v >= cells - 1 else int(v))
                v = (y[i] - low[1]) * inverse_size[1]
                b = 0 if v < 0.0 else (cells - 1 if v >= cells - 1 else int(v))
                row = first_cell + a * cells + b
            lit = light[i] * scale + offset
            c0, c1, c2 = palette[row, 0] * lit, palette[row, 1] * lit, palette[row, 2] * lit
        else:
            r = ux[i] * up[0] + uy[i] * up[1] + uz[i] * up[2]
            r = min(max(r, np.float32(0.0)), np.float32(1.0))
            c0, c1, c2 = horizon[0] + r * rise[0], horizon[1] + r * rise[1], horizon[2] + r * rise[2]
        if noisy:
            c0, c1, c2 = c0 + noise[i, 0], c1 + noise[i, 1], c2 + noise[i, 2]
        image[i, 0] = np.uint8(min(max(np.rint(c0), np.float32(0.0)), np.float32(255.0)))
        image[i, 1] = np.uint8(min(max(np.rint(c1), np.float32(0.0)), np.float32(255.0)))
        image[i, 2] = np.uint8(min(max(np.rint(c2), np.float32(0.0)), np.float32(255.0)))


class Kernels(NamedTuple):
    """The compiled kernels (see the module's docstring)."""

    to_world: Callable[..., None]
    prepare: Callable[..., None]
    refine: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    moving_refine: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]]
    near_boxes: Callable[..., np.ndarray]
    camera_points: Callable[..., int]
    camera_shade: Callable[..., None]


LOAD_AFTER_RAYS = 2_000_000
"""Rays a process casts with numpy before it loads numba's kernels. Loading numba and the cached kernels
costs ~0.5-0.8 s of CPU (numba's import 0.35-0.46 s and the kernels 0.38 s at load average ~7; their
first compile after an install ~4 s once) and the kernels save ~0.25 µs a ray (a VLP-16 sample of 28,800 rays: 15 ms
of CPU with numpy, 7.5 ms compiled; bench/bench_rays.py): about 2 M rays pay for it. Renting until the
price of buying is paid keeps a run within twice the CPU of the better choice made in hindsight, and a
short run of small sensors (the demo's ~10,000 rays a second) never pays for numba."""
LOAD_AT_BATCH = 20_000
"""A batch of this many rays or more loads the kernels at once: its sensor (a 3D LIDAR, a depth camera)
saves >= 5 ms of CPU a sample compiled, so a run of it pays for the load within ~100 samples, and its
first samples (a start-up) are where loading costs least."""

_compiled: Kernels | None = None
_tried = False
_rays_cast = 0


def kernels() -> Kernels | None:
    """numba's kernels when they are loaded (see `count`), else None: numpy's path."""
    return _compiled


def count(rays: int) -> Kernels | None:
    """Count a batch of `rays` rays about to be cast, load numba's kernels when LOAD_AFTER_RAYS rays
    have been cast or the batch has LOAD_AT_BATCH rays or more, and return them (None until then, or
    where numba is not wanted or cannot load them)."""
    global _rays_cast
    if _compiled is not None or _tried:
        return _compiled
    _rays_cast += rays
    if rays < LOAD_AT_BATCH and _rays_cast < LOAD_AFTER_RAYS:
        return None
    return load()


def load() -> Kernels | None:
    """The kernels compiled by numba (loaded from its cache after the first run; imports numba on the
    first call), or None where numba cannot be imported or compile them, or `SEAR_NO_NUMBA` is set."""
    global _compiled, _tried
    if _tried or not numba_wanted():
        return _compiled
    _tried = True
    compiled = compiled_or_none(compile_kernels, "the ray kernels", "the rays' arithmetic runs with numpy")
    if compiled is None:
        return None
    _compiled = compiled
    return _compiled


def compile_kernels() -> Kernels:
    """The kernels compiled by numba (sear.jit.compile_functions) and called once each: numba compiles
    them, or loads them from its cache, at the first call, which is then here and not inside a sample."""
    from sear.jit import compile_functions

    compiled = Kernels(*compile_functions(to_world, prepare, refine, moving_refine, near_boxes,
                                                 camera_points, camera_shade))
    _warm(compiled)
    return compiled


def _warm(chosen: Kernels) -> None:
    """Call each kernel once on one ray and one triangle."""
    one = np.zeros((1, 3))
    index = np.zeros(1, dtype=np.int64)
    chosen.to_world(one, one, np.eye(3), np.zeros(3), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3)))
    chosen.prepare(one, one, index, np.zeros(1), np.ones(1), np.zeros(3), np.zeros((1, 3), dtype=np.float32),
                   np.zeros((1, 3), dtype=np.float32), np.zeros(1, dtype=np.float32))
    chosen.refine(np.full(1, -1, dtype=np.int32), np.zeros(1, dtype=np.float32), False, index, np.zeros(1), one,
                  one, one, one, np.zeros(1, dtype=np.int32), np.ones(1), np.ones(1), np.zeros(1),
                  np.zeros(1, dtype=bool), index, False, False, True, np.ones(1), np.zeros((1, 3)), index.copy())
    chosen.moving_refine(np.full(1, -1, dtype=np.int32), np.zeros(1, dtype=np.float32), index, np.zeros(1), one, one,
                         one, one, np.ones(1), np.zeros(1, dtype=np.int32), np.zeros(1, dtype=bool),
                         np.zeros((1, 1), dtype=bool), index.copy(), np.zeros((1, 3, 3)), one, one, index, np.ones(1),
                         np.zeros((1, 3)), index.copy())
    chosen.near_boxes(one, one, np.ones(1), one, one)
    column, unit = np.ones(1), np.ones(1, dtype=np.float32)
    single = np.ones(1, dtype=np.float32)
    chosen.camera_points(np.full(1, 0.5), np.ones((1, 3)), (column, column, column), np.eye(3), np.zeros(3),
                         np.ones(3), 1e-4, np.ones(3), True, np.zeros(1), np.zeros(1), np.zeros(1, dtype=np.float32),
                         index.copy(), np.zeros((1, 3)), np.zeros((1, 3)))
    chosen.camera_shade(np.full(1, 0.5), index, np.zeros(1), np.zeros(1), single, np.float32(1.0), np.float32(0.0),
                        np.ones((2, 3), dtype=np.float32), -1, 1, np.zeros(2), np.ones(2), 1, (unit, unit, unit),
                        single.repeat(3), single.repeat(3), single.repeat(3), np.zeros((0, 3), dtype=np.float32),
                        np.zeros((1, 3), dtype=np.uint8))
