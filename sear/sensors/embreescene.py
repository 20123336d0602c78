"""Triangles in an Embree scene (through `embreex`), and rays cast against them with float64 hits.

What sear.sensors.raycast builds its scenes from: the fixed world (terrain and fixed obstacles) in one
scene made once, and the moving bodies' convex parts (robots' hulls, boxes) in a small scene made again
whenever they have moved. No pybullet here: the caster gives the triangles in the world frame.

Embree works in float32. The triangles are given to it relative to the middle of the scene, and each hit
Embree finds is recomputed in float64 on the plane of the triangle it found, so its distance is as exact
as pybullet's. `embreex` casts one ray at a time in C: every ray handed to a scene costs ~90 ns however
small the scene, which is why the caster hands the moving scene only the rays that pass near it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sear.collision import StaticShape
from sear.sensors.raykernels import Kernels, kernels

BOX_FACES = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
"""The 12 outward-wound triangles of BOX_CORNERS."""
_NONE = np.zeros(0, dtype=np.int64)
_NO_TFAR = np.zeros(0, dtype=np.float32)
BOX_CORNERS = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
"""A box's corners, each half extent scaled by ±1."""


def embree() -> tuple[Any, Any, Any] | None:
    """embreex's scene, mesh and device classes, or None where embreex cannot be imported."""
    try:
        from embreex.mesh_construction import TriangleMesh
        from embreex.rtcore import EmbreeDevice
        from embreex.rtcore_scene import EmbreeScene
    except ImportError:
        return None
    return EmbreeScene, TriangleMesh, EmbreeDevice


class TriangleScene:
    """Shapes joined into one Embree mesh, with what is needed to refine and name its hits.

    A shape marked `solid` is a closed convex solid with outward-facing triangles (an obstacle, a box, a
    robot's hull), which pybullet does not see from inside: a ray that starts inside one passes out
    through its far side unseen, so a hit on its face seen from behind is skipped and the ray goes on. A
    shape that is not solid (the terrain) is a surface, hit from either side, as pybullet does.

    Each triangle's plane is worked out once here (~70 bytes a triangle besides Embree's ~85), so that
    refining a hit costs a few gathers and two dot products."""

    MAX_PASSES = 8
    """Faces skipped along a ray before it stops looking (rays starting inside as many solids, or
    through the casting robot's own parts)."""

    def __init__(self, engine: tuple[Any, Any, Any], device: Any, shapes: Sequence[StaticShape],
                 centre: np.ndarray, solid: Sequence[bool]) -> None:
        """`engine`: embree()'s classes; `device`: the EmbreeDevice the scene lives on (one per caster
        family: making a device costs ~80 µs); `shapes`: world-frame triangles (m); `centre` (m): where
        Embree's float32 coordinates are taken from; `solid`: each shape's kind (see the class)."""
        scene_class, mesh_class, _ = engine
        if len(shapes) == 1:  # the terrain alone: its own arrays, not copied
            self.vertices, self.faces = shapes[0].vertices, shapes[0].faces
        else:
            counts = np.cumsum([0] + [len(s.vertices) for s in shapes])
            self.vertices = np.concatenate([s.vertices for s in shapes])
            self.faces = np.concatenate([s.faces + counts[i] for i, s in enumerate(shapes)])
        self.face_starts = np.cumsum([0] + [len(s.faces) for s in shapes[:-1]])
        self.bodies = np.array([s.body for s in shapes], dtype=np.int64)
        self.margins = np.array([s.margin if kind else 0.0 for s, kind in zip(shapes, solid, strict=True)])
        self.solid = np.array(solid, dtype=bool)
        self.any_solid = bool(self.solid.any())
        self.centre = centre
        # Per triangle, once: its plane (the unnormalised normal, as the refinement has always computed it,
        # and a corner), so a hit costs a few gathers and two dot products.
        corners = self.vertices[self.faces]
        self.face_normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        self.face_corner = np.ascontiguousarray(corners[:, 0])
        self.face_length = np.linalg.norm(self.face_normal, axis=1)
        length = self.face_length.copy()
        length[length == 0.0] = 1.0
        self.face_inverse_length = 1.0 / length
        self.face_shape = (np.searchsorted(self.face_starts, np.arange(len(self.faces)), side="right") - 1
                           ).astype(np.int32)
        self.any_margin = bool((self.margins > 0.0).any())
        self.low = self.vertices.min(axis=0)
        """(3,) m: the scene's bounding box (with `high`)."""
        self.high = self.vertices.max(axis=0)
        self.scene = scene_class(device, robust=True)  # watertight: no ray slips between two triangles
        mesh_class(self.scene, (self.vertices - centre).astype(np.float32), self.faces.astype(np.int32))

    @property
    def triangles(self) -> int:
        return len(self.faces)

    def cast(self, starts: np.ndarray, direction: np.ndarray, result: Any, rays: np.ndarray | None = None,
             *, passes: bool = True) -> np.ndarray:
        """Cast rays starts + t * direction, t in [0, 1] (world frame, m), and keep each hit nearer than
        what `result` (a RayResult) holds, updated in place. `rays`: only these rays (indices), all by
        default.

        A ray goes on 10 µm past a face it passes, so a face of another shape within 10 µm behind it is
        missed: in a scene joining shapes that can touch like that (the terrain and an obstacle standing
        on it), `passes=False` stops instead, and the rays that met a face to pass are returned (indices,
        their hits not kept) for the caller to cast against the shapes apart. Otherwise returns none."""
        compiled = kernels()
        if compiled is not None:
            return self._cast_compiled(compiled, starts, direction, result, rays, passes)
        if rays is None:
            rays = np.arange(len(starts))
            d, s = direction, starts
        else:
            d, s = direction[rays], starts[rays]
        begin = np.zeros(len(rays))  # where each ray's pass starts, t
        for number in range(self.MAX_PASSES):
            # The first pass starts every ray at t = 0: its origins are the starts themselves.
            origins = s + d * begin[:, None] if number else s
            # Each pass looks no farther than the hit kept so far: Embree prunes the rest.
            found = self.scene.run((origins - self.centre).astype(np.float32), d.astype(np.float32),
                                   dists=(result.fraction[rays] - begin).astype(np.float32), output=1)
            hit = np.flatnonzero(found["geomID"] >= 0)
            if not len(hit):
                return _NONE
            prim = found["primID"][hit]
            normal = self.face_normal[prim]
            dh = d[hit]
            facing = _dot(normal, dh)
            shape = self.face_shape[prim]
            behind = facing > 0.0
            # The exact hit on the plane of the triangle Embree found (Embree's own t is float32), moved
            # out by the shape's margin on the faces seen from the front, where pybullet's surface is.
            with np.errstate(divide="ignore", invalid="ignore"):
                plane = _dot(normal, self.face_corner[prim] - s[hit])
                if self.any_margin:
                    margin = self.margins[shape]
                    offset = np.where(~behind & (margin > 0.0), margin * self.face_length[prim], 0.0)
                    exact = (plane + offset) / facing
                else:
                    exact = plane / facing
            embree_t = begin[hit] + found["tfar"][hit]
            t = np.where(np.isfinite(exact) & (exact >= 0.0) & (exact <= 1.0), exact, embree_t)
            passing = behind & self.solid[shape] if self.any_solid else None
            stopped: np.ndarray | None = None
            next_rays: np.ndarray | None = None
            next_begin = _NONE
            ray_of_hit = rays[hit]
            if passing is not None and passing.any():
                front = ~passing
                if passes:
                    ahead = hit[passing]
                    # Go on 10 µm past the triangle itself (not the margin's surface in front of it).
                    step = 1e-5 / np.maximum(np.sqrt(_dot(d[ahead], d[ahead])), 1e-12)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        through = plane[passing] / facing[passing]
                    through = np.where(np.isfinite(through), through, embree_t[passing])
                    next_rays, next_begin = rays[ahead], np.maximum(through, begin[ahead]) + step
                    next_d, next_s = d[ahead], s[ahead]
                else:
                    stopped = ray_of_hit[passing]
                ray_of_hit, prim, t, behind = ray_of_hit[front], prim[front], t[front], behind[front]
                shape = shape[front]
            nearer = t < result.fraction[ray_of_hit]
            index, prim, t, behind = ray_of_hit[nearer], prim[nearer], t[nearer], behind[nearer]
            result.fraction[index] = t
            inverse = self.face_inverse_length[prim]
            if behind.any():  # faces seen from behind (the terrain's underside): the normal turned round
                inverse = np.where(behind, -inverse, inverse)
            result.normal[index] = self.face_normal[prim] * inverse[:, None]
            result.body[index] = self.bodies[shape[nearer]]
            if next_rays is None:
                return _NONE if stopped is None else stopped
            keep = next_begin < result.fraction[next_rays]
            rays, begin, d, s = next_rays[keep], next_begin[keep], next_d[keep], next_s[keep]
            if not len(rays):
                return _NONE
        return _NONE

    def occluded(self, starts: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """(N,) bool: whether each ray starts + t * direction, t in [0, 1] (world frame, m), meets any
        triangle of the scene. Embree's occlusion query stops at the first triangle found, whichever it is,
        and gives no distance to refine: ~2/3 of the cost of `cast`'s nearest hit. A face is a face here
        from either side: a ray that starts inside a solid is blocked by its far side (not in `cast`),
        which a shadow ray, starting just off a surface seen from outside, never is."""
        origins = starts - self.centre
        found = self.scene.run(origins.astype(np.float32), direction.astype(np.float32),
                               dists=np.ones(len(starts), dtype=np.float32), query="OCCLUDED")
        return np.asarray(found) >= 0

    def _embree_rays(self, compiled: Kernels, starts: np.ndarray, direction: np.ndarray, rays: np.ndarray,
                     begin: np.ndarray, result: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Embree's float32 origins, directions and reaches of a pass of `rays` from t = `begin`
        (raykernels.prepare)."""
        k = len(rays)
        origins, directions = np.empty((k, 3), dtype=np.float32), np.empty((k, 3), dtype=np.float32)
        dists = np.empty(k, dtype=np.float32)
        compiled.prepare(starts, direction, rays, begin, result.fraction, self.centre, origins, directions, dists)
        return origins, directions, dists

    def _cast_compiled(self, compiled: Kernels, starts: np.ndarray, direction: np.ndarray, result: Any,
                       rays: np.ndarray | None, passes: bool) -> np.ndarray:
        """`cast` with numba's kernels (sear.sensors.raykernels): the same hits to the bit. Embree is asked
        for the triangle alone (its cheapest query, ~20 % less than with every output); the few hits whose
        distance the triangle's plane does not give are asked again for Embree's own distance."""
        if rays is None:
            rays = np.arange(len(starts))
        begin = np.zeros(len(rays))
        stopped = [_NONE]
        for _ in range(self.MAX_PASSES):
            origins, directions, dists = self._embree_rays(compiled, starts, direction, rays, begin, result)
            prim = self.scene.run(origins, directions, dists=dists)
            arguments = (rays, begin, starts, direction, self.face_normal, self.face_corner, self.face_shape,
                         self.face_length, self.face_inverse_length, self.margins, self.solid, self.bodies,
                         self.any_margin, self.any_solid, passes, result.fraction, result.normal, result.body)
            need, next_rays, next_begin, halted = compiled.refine(prim, _NO_TFAR, False, *arguments)
            if len(need):
                tfar = np.zeros(len(rays), dtype=np.float32)
                # DISTANCE writes each ray's distance into the dists it is given: a copy of theirs.
                tfar[need] = self.scene.run(origins[need], directions[need], dists=dists[need], query="DISTANCE")
                need, next_rays, next_begin, halted = compiled.refine(prim, tfar, True, *arguments)
            stopped.append(halted)
            if not len(next_rays):
                break
            rays, begin = next_rays, next_begin
        return np.concatenate(stopped) if not passes else _NONE


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products of two (N, 3) arrays (einsum's order of summation)."""
    return np.einsum("ij,ij->i", a, b)


def near_boxes(starts: np.ndarray, direction: np.ndarray, reach: np.ndarray, lows: np.ndarray,
               highs: np.ndarray) -> np.ndarray:
    """Indices of the rays whose segment from t = 0 to t = reach crosses any of the boxes lows[i]..highs[i]
    ((B, 3), m; slab tests in float64). Boxes clear of the box around every segment are left out first;
    the rest are tested one by one, a column at a time (numpy reduces a 3-wide axis slowly)."""
    if not len(lows):
        return _NONE
    compiled = kernels()
    if compiled is not None:
        return compiled.near_boxes(starts, direction, reach, lows, highs)
    columns = [np.ascontiguousarray(starts[:, k]) for k in range(3)]
    steps = [direction[:, k] * reach for k in range(3)]
    low = np.array([min(c.min(), (c + e).min()) for c, e in zip(columns, steps, strict=True)])
    high = np.array([max(c.max(), (c + e).max()) for c, e in zip(columns, steps, strict=True)])
    keep = ((lows <= high) & (highs >= low)).all(axis=1)
    if not keep.any():
        return _NONE
    # A zero component becomes a tiny one: its slab then bounds t by ±huge (outside it) or by nothing
    # (inside), as the limit says, without inf * 0.
    inverse = [1.0 / np.where(direction[:, k] == 0.0, 1e-30, direction[:, k]) for k in range(3)]
    near = np.zeros(len(starts), dtype=bool)
    for box_low, box_high in zip(lows[keep], highs[keep], strict=True):
        enter, leave = np.zeros(len(starts)), reach.copy()
        for k in range(3):
            t1 = (box_low[k] - columns[k]) * inverse[k]
            t2 = (box_high[k] - columns[k]) * inverse[k]
            np.maximum(enter, np.minimum(t1, t2), out=enter)
            np.minimum(leave, np.maximum(t1, t2), out=leave)
        near |= enter <= leave
    return np.flatnonzero(near)


def expanded_hull(normals: np.ndarray, offsets: np.ndarray, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The convex polytope n·x <= offset of every plane (normals (P, 3), offsets (P,), m) as triangles:
    vertices (V, 3) m and faces (F, 3) wound outwards. `inside`: a point strictly inside it. A robot's hull
    with its collision margin (sear.collision.RobotHull's planes are already moved out by it), which is
    the surface pybullet's ray test meets."""
    from scipy.spatial import ConvexHull, HalfspaceIntersection

    vertices = HalfspaceIntersection(np.column_stack([normals, -offsets]), inside).intersections
    faces = ConvexHull(vertices).simplices
    corners = vertices[faces]
    outward = np.einsum("ij,ij->i", np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]),
                        corners.mean(axis=1) - inside)
    faces = np.where((outward < 0.0)[:, None], faces[:, ::-1], faces)
    return vertices, faces


class MovingScene(TriangleScene):
    """The moving bodies' convex parts where they are now, in one scene made again whenever they move.

    Two kinds of part. A robot's hull (with its margin) is cast as any solid: the hit refined on the plane
    of the triangle found. A box (movable boxes, gripper parts) is given to Embree GRAZE larger on every
    side, and every ray Embree finds on that larger box is tested against the true box in float64 (slab
    test in the box's frame): its hit, or no hit. pybullet's own ray test of a box is good to about a
    millimetre, and meets rays that pass that close outside it (along a box resting on the ground, for
    one): the rays that meet the larger box but miss the true one are returned by `cast` as grazes, for
    the caster to ask pybullet, so such rays keep pybullet's answer."""

    GRAZE = 0.002
    """m: how far outside a box a ray counts as a graze (pybullet's box test errs by up to ~1 mm)."""

    def __init__(self, engine: tuple[Any, Any, Any], device: Any, shapes: Sequence[StaticShape],
                 boxes: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray] | None]) -> None:
        """`shapes`: every part's triangles in the world frame (boxes already GRAZE larger); `boxes`: for
        each shape, None (a hull) or its box's (rotation (3, 3) to the world frame, centre (3,) m, half
        extents (3,) m)."""
        vertices = np.concatenate([s.vertices for s in shapes])
        super().__init__(engine, device, shapes, (vertices.min(axis=0) + vertices.max(axis=0)) / 2.0,
                         [True] * len(shapes))
        self.part_low = np.array([s.vertices.min(axis=0) for s in shapes])
        """(P, 3) m: each part's bounding box in the world frame (with `part_high`)."""
        self.part_high = np.array([s.vertices.max(axis=0) for s in shapes])
        self.is_box = np.array([b is not None for b in boxes], dtype=bool)
        self._ignored_by: dict[bytes, np.ndarray] = {}
        self.box_rotation = np.array([b[0] if b is not None else np.eye(3) for b in boxes])
        self.box_centre = np.array([b[1] if b is not None else np.zeros(3) for b in boxes])
        self.box_half = np.array([b[2] if b is not None else np.zeros(3) for b in boxes])

    def near(self, starts: np.ndarray, direction: np.ndarray, reach: np.ndarray, ignore: np.ndarray) -> np.ndarray:
        """Indices of the rays that pass through the bounding box of a part of a body not in `ignore`,
        up to t = reach: the only rays worth handing to `cast`."""
        others = ~self._ignored(ignore)
        return near_boxes(starts, direction, reach, self.part_low[others], self.part_high[others])

    def _ignored(self, ignore: np.ndarray | None) -> np.ndarray:
        """Which parts belong to the `ignore` bodies (a caster's robot), kept per caster: np.isin costs
        ~50 µs a call."""
        key = b"" if ignore is None else ignore.tobytes()
        found = self._ignored_by.get(key)
        if found is None:
            found = self._ignored_by[key] = (np.isin(self.bodies, ignore) if ignore is not None and len(ignore)
                                             else np.zeros(len(self.bodies), dtype=bool))
        return found

    def cast(self, starts: np.ndarray, direction: np.ndarray, result: Any, rays: np.ndarray | None = None,
             ignore: np.ndarray | None = None, *, passes: bool = True) -> np.ndarray:
        """Cast the rays (see TriangleScene.cast) and keep nearer hits in `result`; returns the grazes
        (indices of rays that met a box's GRAZE margin but missed the box itself, their hits not kept)."""
        if rays is None:
            rays = np.arange(len(starts))
        skip = self._ignored(ignore)
        compiled = kernels()
        if compiled is not None:
            return self._cast_moving_compiled(compiled, starts, direction, result, rays, skip[None, :],
                                              np.zeros(len(starts), dtype=np.int64))
        begin = np.zeros(len(rays))
        grazes = [_NONE]
        for _ in range(self.MAX_PASSES):
            d, s = direction[rays], starts[rays]
            found = self.scene.run((s + d * begin[:, None] - self.centre).astype(np.float32), d.astype(np.float32),
                                   dists=(result.fraction[rays] - begin).astype(np.float32), output=1)
            hit = np.flatnonzero(found["geomID"] >= 0)
            if not len(hit):
                break
            prim = found["primID"][hit]
            shape = np.searchsorted(self.face_starts, prim, side="right") - 1
            embree_t = begin[hit] + found["tfar"][hit]
            t = np.full(len(hit), np.inf)
            normal = np.zeros((len(hit), 3))
            passing = skip[shape]
            graze = np.zeros(len(hit), dtype=bool)
            # Hulls: the hit on the plane of the triangle found; a face seen from behind passes.
            hull = np.flatnonzero(~self.is_box[shape] & ~passing)
            if len(hull):
                n = self.face_normal[prim[hull]]
                facing = _dot(n, d[hit[hull]])
                with np.errstate(divide="ignore", invalid="ignore"):
                    exact = _dot(n, self.face_corner[prim[hull]] - s[hit[hull]]) / facing
                front = facing < 0.0
                t[hull] = np.where(np.isfinite(exact) & (exact >= 0.0) & (exact <= 1.0), exact, embree_t[hull])
                normal[hull] = n * self.face_inverse_length[prim[hull], None]
                passing[hull[~front]] = True
            # Boxes: the slab test against the true box, in its frame.
            box = np.flatnonzero(self.is_box[shape] & ~passing)
            if len(box):
                part = shape[box]
                rotation = self.box_rotation[part]
                local_start = np.einsum("kji,kj->ki", rotation, s[hit[box]] - self.box_centre[part])
                local_d = np.einsum("kji,kj->ki", rotation, d[hit[box]])
                half = self.box_half[part]
                with np.errstate(divide="ignore", invalid="ignore"):
                    inverse = 1.0 / np.where(local_d == 0.0, 1e-300, local_d)
                    t1 = (-half - local_start) * inverse
                    t2 = (half - local_start) * inverse
                near_t, far_t = np.minimum(t1, t2), np.maximum(t1, t2)
                axis = near_t.argmax(axis=1)
                enter = near_t[np.arange(len(box)), axis]
                leave = far_t.min(axis=1)
                meets = (enter <= leave) & (enter >= 0.0)
                inside = (enter < 0.0) & (leave >= 0.0)
                sign = -np.sign(local_d[np.arange(len(box)), axis])
                face = rotation[np.arange(len(box)), :, axis] * sign[:, None]
                t[box[meets]] = enter[meets]
                normal[box[meets]] = face[meets]
                # A ray from inside the box passes out unseen (as pybullet's); one that met the larger box
                # from outside (its front face) and misses the box itself grazes it.
                entering = _dot(self.face_normal[prim[box]], d[hit[box]]) < 0.0
                graze[box[~meets & ~inside & entering]] = True
                passing[box[~meets & ~graze[box]]] = True
            grazes.append(rays[hit[graze]])
            done = ~passing & ~graze
            index = rays[hit[done]]
            nearer = t[done] < result.fraction[index]
            index = index[nearer]
            result.fraction[index] = t[done][nearer]
            result.normal[index] = normal[done][nearer]
            result.body[index] = self.bodies[shape[done][nearer]]
            ahead = hit[passing]
            if not len(ahead):
                break
            step = 1e-5 / np.maximum(np.linalg.norm(d[ahead], axis=1), 1e-12)
            next_begin = np.maximum(embree_t[passing], begin[ahead]) + step
            keep = next_begin < result.fraction[rays[ahead]]
            rays, begin = rays[ahead][keep], next_begin[keep]
            if not len(rays):
                break
        return np.concatenate(grazes)

    def cast_grouped(self, starts: np.ndarray, direction: np.ndarray, result: Any, rays: np.ndarray,
                     ray_group: np.ndarray, ignores: Sequence[np.ndarray]) -> np.ndarray:
        """`cast` of the rays of several casters in one go (numba's kernels only: `kernels()` must not be
        None): ray r is caster ray_group[r]'s, which ignores the bodies ignores[ray_group[r]]. The same hits
        as a `cast` of each caster's rays; returns the grazes (indices into `starts`)."""
        compiled = kernels()
        assert compiled is not None
        skip = np.array([self._ignored(ignore) for ignore in ignores], dtype=bool).reshape(len(ignores), -1)
        return self._cast_moving_compiled(compiled, starts, direction, result, rays, skip, ray_group)

    def _cast_moving_compiled(self, compiled: Kernels, starts: np.ndarray, direction: np.ndarray, result: Any,
                              rays: np.ndarray, skip: np.ndarray, ray_group: np.ndarray) -> np.ndarray:
        """`cast` with numba's kernels (sear.sensors.raykernels.moving_refine): the same hits to the bit.
        `skip[g]`: the parts the rays of group g (`ray_group[r]` of ray r) pass."""
        begin = np.zeros(len(rays))
        grazes = [_NONE]
        for _ in range(self.MAX_PASSES):
            origins, directions, dists = self._embree_rays(compiled, starts, direction, rays, begin, result)
            found = self.scene.run(origins, directions, dists=dists, output=1)
            grazed, rays, begin = compiled.moving_refine(
                found["primID"], found["tfar"], rays, begin, starts, direction, self.face_normal, self.face_corner,
                self.face_inverse_length, self.face_shape, self.is_box, skip, ray_group, self.box_rotation,
                self.box_centre, self.box_half, self.bodies, result.fraction, result.normal, result.body)
            grazes.append(grazed)
            if not len(rays):
                break
        return np.concatenate(grazes)
