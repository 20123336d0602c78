"""Where the sensors cast their rays: every ray of every sensor due on a tick goes through here in one batch.

(The physics casts rays of its own: the raycast vehicle's wheel rays in sear.physics.vehicle and the
terrain height look-ups in sear.physics.world.)

Two engines. The fixed world (terrain and fixed obstacles, sear.collision.StaticWorld, which
sear.physics.world.World fills as bodies are added) is cast with Intel Embree through `embreex`, 10-20
times faster than pybullet's rayTestBatch on the same triangles. Only the rays whose segment, up to
their static hit, crosses the bounding box of a moving body (a box with mass; never the robot) are cast
with pybullet as well, and the nearer hit wins. Embree works in float32: the triangles are given to it
relative to the middle of the fixed world, and each Embree hit is then recomputed in float64 against the
plane of the triangle it found, so its distance is as exact as pybullet's. Without `embreex` (where it
cannot be installed) every ray goes to pybullet, with one warning per process.

pybullet's rayTestBatch takes at most 16,383 rays per call (a numpy batch of 16,384 or more silently
returns nothing), so batches for it are split; Embree has no such limit.

A robot never sees itself and sees every other robot. All robots share one collision group
(sear.collision), so no ray mask can tell them apart: the caster is told its own robot's bodies and
leaves them out itself. No robot is part of the fixed world; the other robots' convex hulls are tested
here (_cast_hulls), and its own are skipped. A pybullet ray whose first hit is its own robot is cast
again for every hit along it (rayTestBatch's reportHitNumber), and the nearest hit on anything else
wins: the same hit, to the bit, that a collision mask leaving its robot out would give.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import pybullet as p

from sear.collision import RobotHull, StaticShape, StaticWorld

MAX_BATCH = 16_383
"""Most rays pybullet's rayTestBatch casts in one call."""
RAY_THREADS = 0
"""rayTestBatch's numThreads: 0 uses every core (on two cores a 1,132-ray batch takes ~60 % of the
single-threaded time)."""
MAX_EMBREE_TRIANGLES = 1_000_000
"""Fixed worlds of more triangles are cast with pybullet alone: Embree's structure costs ~85 bytes and a
few microseconds of start-up a triangle (a 2049² heightmap's 8.4 M triangles: +700 MB, tens of seconds),
which would break the run's memory and start-up limits for large terrains."""
BOX_PADDING = 0.01
"""Margin added around each moving body's bounding box (m) when choosing the rays pybullet casts too."""
_FRACTION, _BODY, _NORMAL = operator.itemgetter(2), operator.itemgetter(0), operator.itemgetter(4)
_embree_warned = False


class RayResult(NamedTuple):
    """What a batch of rays hit, one row per ray."""

    fraction: np.ndarray
    """(N,) fraction of each ray's length at its hit; 1.0 for a miss."""
    normal: np.ndarray
    """(N, 3) unit normal of the surface hit, world frame, facing the ray's start; zeros for a miss."""
    body: np.ndarray
    """(N,) pybullet body id of what was hit; -1 for a miss. Terrain hits report the terrain's first body."""


def _forget(result: RayResult, rays: np.ndarray) -> None:
    """Make rays `rays` of `result` misses."""
    result.fraction[rays] = 1.0
    result.normal[rays] = 0.0
    result.body[rays] = -1


def _embree() -> Any:
    """embreex's scene and mesh classes, or None where embreex cannot be imported (warned once per process)."""
    global _embree_warned
    try:
        from embreex.mesh_construction import TriangleMesh
        from embreex.rtcore_scene import EmbreeScene
    except ImportError as exc:
        if not _embree_warned:
            _embree_warned = True
            warnings.warn(f"the Embree ray engine (Python package embreex) is not available ({exc}); the "
                          "sensors' rays are cast with pybullet alone, which is several times slower. "
                          "Install embreex to speed them up.", RuntimeWarning, stacklevel=3)
        return None
    return EmbreeScene, TriangleMesh


class _StaticScene:
    """Some fixed shapes joined into one Embree mesh, with what is needed to refine and name its hits.

    `solid`: the shapes are closed convex solids with outward-facing triangles (obstacles), which
    pybullet does not see from inside: a ray that starts inside one passes out through its far side
    unseen, so here a hit on a face seen from behind is skipped and the ray goes on. The terrain is
    a surface, hit from either side (as pybullet does)."""

    MAX_PASSES = 8
    """Faces seen from behind a ray may pass before it stops looking (rays starting inside as many solids)."""

    def __init__(self, embree: Any, shapes: Sequence[StaticShape], centre: np.ndarray, *, solid: bool) -> None:
        scene_class, mesh_class = embree
        if len(shapes) == 1:  # the terrain: its own arrays, not copied
            self.vertices, self.faces = shapes[0].vertices, shapes[0].faces
        else:
            counts = np.cumsum([0] + [len(s.vertices) for s in shapes])
            self.vertices = np.concatenate([s.vertices for s in shapes])
            self.faces = np.concatenate([s.faces + counts[i] for i, s in enumerate(shapes)])
        self.face_starts = np.cumsum([0] + [len(s.faces) for s in shapes[:-1]])
        self.bodies = np.array([s.body for s in shapes], dtype=np.int64)
        self.margins = np.array([s.margin for s in shapes]) if solid else None
        self.centre = centre
        self.solid = solid
        self.scene = scene_class(robust=True)  # watertight: no ray slips between two triangles
        mesh_class(self.scene, (self.vertices - centre).astype(np.float32), self.faces.astype(np.int32))

    def cast(self, starts: np.ndarray, direction: np.ndarray, result: RayResult) -> None:
        """Cast rays starts + t * direction, t in [0, 1] (world frame, m), and keep each hit nearer than
        what `result` holds."""
        rays = np.arange(len(starts))
        begin = np.zeros(len(starts))  # where each ray's pass starts, t
        for _ in range(self.MAX_PASSES):
            d = direction[rays]
            origins = starts[rays] + d * begin[:, None]
            found = self.scene.run((origins - self.centre).astype(np.float32), d.astype(np.float32),
                                   dists=(1.0 - begin).astype(np.float32), output=1)
            hit = np.flatnonzero(found["geomID"] >= 0)
            if not len(hit):
                return
            prim = found["primID"][hit]
            corners = self.vertices[self.faces[prim]]  # (k, 3, 3) float64
            normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
            facing = np.einsum("ij,ij->i", normal, d[hit])
            shape = np.searchsorted(self.face_starts, prim, side="right") - 1
            # The exact hit on the plane of the triangle Embree found (Embree's own t is float32), moved
            # out by the shape's margin on the faces seen from the front, where pybullet's surface is.
            offset = np.zeros(len(hit))
            if self.margins is not None:
                offset = np.where(facing < 0.0, self.margins[shape] * np.linalg.norm(normal, axis=1), 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                exact = (np.einsum("ij,ij->i", normal, corners[:, 0] - starts[rays[hit]]) + offset) / facing
            t = begin[hit] + found["tfar"][hit]
            t = np.where(np.isfinite(exact) & (exact >= 0.0) & (exact <= 1.0), exact, t)
            behind = facing > 0.0
            if self.solid:
                front = ~behind
                ahead = hit[behind]
                # Go on just past the face: 10 µm beyond it along the ray.
                step = 1e-5 / np.maximum(np.linalg.norm(d[ahead], axis=1), 1e-12)
                next_rays, next_begin = rays[ahead], np.maximum(t[behind], begin[ahead]) + step
                hit, shape, normal, t, behind = hit[front], shape[front], normal[front], t[front], behind[front]
            index = rays[hit]
            nearer = t < result.fraction[index]
            index, t, normal, behind, shape = index[nearer], t[nearer], normal[nearer], behind[nearer], shape[nearer]
            length = np.linalg.norm(normal, axis=1)
            length[length == 0.0] = 1.0
            result.fraction[index] = t
            result.normal[index] = normal * (np.where(behind, -1.0, 1.0) / length)[:, None]
            result.body[index] = self.bodies[shape]
            if not self.solid or not len(next_rays):
                return
            keep = next_begin < 1.0
            rays, begin = next_rays[keep], next_begin[keep]
            if not len(rays):
                return


class RayCaster:
    """Casts batches of rays in a pybullet client, ignoring the given (robot) bodies.

    With `static_world` (the fixed bodies' triangles) and embreex importable, the fixed world is cast
    with Embree and only rays near moving bodies with pybullet too; otherwise (or with
    `engine="pybullet"`) every ray with pybullet."""

    def __init__(self, client: int, ignore_bodies: list[int], static_world: StaticWorld | None = None, *,
                 engine: str = "auto") -> None:
        """`ignore_bodies`: the bodies of the robot whose sensors these rays are (World.robot_body_ids):
        no ray ever hits them; every other body, other robots' too, is hit."""
        if engine not in ("auto", "pybullet"):
            raise ValueError(f"engine must be 'auto' or 'pybullet', not {engine!r}")
        self.client = client
        self.ignore = set(ignore_bodies)
        self._ignored = np.array(sorted(self.ignore), dtype=np.int64)
        self.static_world = static_world
        self.embree = _embree() if static_world is not None and engine == "auto" else None
        self._scenes: list[_StaticScene] = []
        self._terrain_scene: _StaticScene | None = None
        self._version = -1
        self._body_count = -1
        self._moving: list[tuple[int, int]] = []
        """(body, link) of every body part that is neither fixed (in the static world), nor a robot whose
        hull is known, nor ignored: pybullet casts the rays near them."""
        self._hulls: list[RobotHull] = []
        """The other robots' hulls (StaticWorld.robots), tested here (_cast_hulls)."""

    @property
    def engines(self) -> str:
        """'embree+pybullet' or 'pybullet': which engines cast the rays."""
        return "embree+pybullet" if self.embree is not None else "pybullet"

    def cast(self, starts: np.ndarray | list, ends: np.ndarray | list, parent: int | None = None) -> RayResult:
        """Cast rays from starts to ends ((N, 3), m): in the world frame, or with `parent` in the frame of
        that body (its centre-of-mass frame, as pybullet reports its pose). Returns each ray's hit fraction
        of its length (1.0 for a miss), the surface normal and the body hit."""
        begin = np.ascontiguousarray(starts, dtype=np.float64).reshape(-1, 3)
        end = np.ascontiguousarray(ends, dtype=np.float64).reshape(-1, 3)
        if self.embree is not None:
            self._sync()
        if self.embree is None or self.static_world is None:
            return self._pybullet(begin, end, parent)
        if parent is not None:
            position, orientation = p.getBasePositionAndOrientation(parent, physicsClientId=self.client)
            rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
            begin = begin @ rotation.T + position
            end = end @ rotation.T + position
        n = len(begin)
        result = RayResult(np.ones(n), np.zeros((n, 3)), np.full(n, -1, dtype=np.int64))
        direction = end - begin
        for scene in self._scenes:
            scene.cast(begin, direction, result)
        if self._hulls:
            self._cast_hulls(begin, direction, result)
        near = self._near_moving(begin, direction, result.fraction)
        if len(near):
            extra = self._pybullet(begin[near], end[near], None)
            nearer = extra.fraction < result.fraction[near]
            rays = near[nearer]
            result.fraction[rays] = extra.fraction[nearer]
            result.normal[rays] = extra.normal[nearer]
            result.body[rays] = extra.body[nearer]
        return result

    def _pybullet(self, starts: np.ndarray, ends: np.ndarray, parent: int | None) -> RayResult:
        """Every ray through pybullet: the nearest hit on anything but the ignored bodies."""
        result = self._ray_test_batch(starts, ends, parent)
        rays = np.flatnonzero(np.isin(result.body, self._ignored))
        if len(rays):
            _forget(result, rays)
            # Hit number n of each ray (pybullet's order, not the nearest first) until a ray has no more.
            number = 0
            while len(rays):
                nth = self._ray_test_batch(starts[rays], ends[rays], parent, hit_number=number)
                other = (nth.body >= 0) & ~np.isin(nth.body, self._ignored) & (nth.fraction < result.fraction[rays])
                result.fraction[rays[other]] = nth.fraction[other]
                result.normal[rays[other]] = nth.normal[other]
                result.body[rays[other]] = nth.body[other]
                rays = rays[nth.body >= 0]
                number += 1
        return result

    def _ray_test_batch(self, starts: np.ndarray, ends: np.ndarray, parent: int | None,
                        hit_number: int = -1) -> RayResult:
        """Rays through pybullet's rayTestBatch, in batches it accepts: each one's first hit, or with
        `hit_number` n >= 0 its n-th hit in pybullet's order (a miss when it has fewer)."""
        n = len(starts)
        options: dict[str, Any] = {} if parent is None else {"parentObjectUniqueId": parent, "parentLinkIndex": -1}
        if hit_number >= 0:
            options["reportHitNumber"] = hit_number
        results: list[Any] = []
        for lo in range(0, n, MAX_BATCH):
            results.extend(p.rayTestBatch(starts[lo:lo + MAX_BATCH], ends[lo:lo + MAX_BATCH],
                                          numThreads=RAY_THREADS, physicsClientId=self.client, **options))
        fraction = np.fromiter(map(_FRACTION, results), dtype=np.float64, count=n)
        body = np.fromiter(map(_BODY, results), dtype=np.int64, count=n)
        normal = np.fromiter(chain.from_iterable(map(_NORMAL, results)), dtype=np.float64, count=3 * n)
        return RayResult(fraction, normal.reshape(n, 3), body)

    def _sync(self) -> None:
        """Rebuild the Embree scenes after fixed bodies were added (the terrain's once), and the list of
        moving bodies after any body was added."""
        world = self.static_world
        assert world is not None
        count = p.getNumBodies(physicsClientId=self.client)
        if world.version == self._version and count == self._body_count:
            return
        if world.version != self._version:
            shapes = world.terrain + world.obstacles
            if sum(len(s.faces) for s in shapes) > MAX_EMBREE_TRIANGLES:
                self.embree, self._scenes, self._terrain_scene = None, [], None
                return
            lo = np.min([s.vertices.min(axis=0) for s in shapes], axis=0) if shapes else np.zeros(3)
            hi = np.max([s.vertices.max(axis=0) for s in shapes], axis=0) if shapes else np.zeros(3)
            centre = (lo + hi) / 2.0
            if world.terrain and (self._terrain_scene is None
                                  or not np.array_equal(self._terrain_scene.centre, centre)):
                self._terrain_scene = _StaticScene(self.embree, world.terrain, centre, solid=False)
            self._scenes = [s for s in (self._terrain_scene,) if s is not None]
            if world.obstacles:
                self._scenes.append(_StaticScene(self.embree, world.obstacles, centre, solid=True))
            self._version = world.version
        fixed = world.bodies
        moving: list[tuple[int, int]] = []
        hulls: list[RobotHull] = []
        for i in range(count):
            body = p.getBodyUniqueId(i, physicsClientId=self.client)
            if body in fixed or body in self.ignore:
                continue
            joints = p.getNumJoints(body, physicsClientId=self.client)
            if body in world.robots and joints == 0:
                hulls.append(world.robots[body])
                continue
            moving.extend((body, link) for link in range(-1, joints))
        self._moving = moving
        self._hulls = hulls
        self._body_count = count

    def _cast_hulls(self, starts: np.ndarray, direction: np.ndarray, result: RayResult) -> None:
        """Rays against the other robots' hulls: first which rays pass near which robot, for all robots at
        once (each segment, up to its hit so far, against a sphere around the robot), then each robot near
        some ray (_cast_hull)."""
        poses = [p.getBasePositionAndOrientation(hull.body, physicsClientId=self.client) for hull in self._hulls]
        centres = np.array([pose[0] for pose in poses])
        radii = np.array([hull.radius for hull in self._hulls])
        # The box around every segment first: most robots are nowhere near the batch.
        ends = starts + direction * result.fraction[:, None]
        low, high = np.minimum(starts, ends).min(axis=0), np.maximum(starts, ends).max(axis=0)
        near = np.flatnonzero(((centres + radii[:, None] >= low) & (centres - radii[:, None] <= high)).all(axis=1))
        if not len(near):
            return
        length2 = np.maximum(np.einsum("ij,ij->i", direction, direction), 1e-300)
        for k in near:
            centre = centres[k]
            t = np.clip(np.einsum("ij,ij->i", centre - starts, direction) / length2, 0.0, result.fraction)
            closest = starts + direction * t[:, None] - centre
            rays = np.flatnonzero(np.einsum("ij,ij->i", closest, closest) <= radii[k] * radii[k])
            if len(rays):
                self._cast_hull(self._hulls[k], centre, poses[k][1], rays, starts, direction, result)

    @staticmethod
    def _cast_hull(hull: RobotHull, centre: np.ndarray, orientation: Any, rays: np.ndarray, starts: np.ndarray,
                   direction: np.ndarray, result: RayResult) -> None:
        """Rays `rays` against one robot's convex hull (its frame at `centre`, `orientation`), in place of
        `result`'s hits where nearer: each ray is clipped by the hull's planes in the robot's frame (it
        enters the hull at the last plane it crosses inwards, before it leaves at the first it crosses
        outwards)."""
        rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
        local_start = (starts[rays] - centre) @ rotation  # into the body frame: R^T (s - c)
        local_direction = direction[rays] @ rotation
        denominator = local_direction @ hull.normals.T  # (rays, planes)
        numerator = hull.offsets - local_start @ hull.normals.T
        with np.errstate(divide="ignore", invalid="ignore"):
            crossing = numerator / denominator
        entering = denominator < 0.0
        enter = np.where(entering, crossing, -np.inf)
        leave = np.where(denominator > 0.0, crossing, np.inf)
        outside_parallel = ((denominator == 0.0) & (numerator < 0.0)).any(axis=1)
        plane = enter.argmax(axis=1)
        t_enter = enter[np.arange(len(rays)), plane]
        t_leave = leave.min(axis=1)
        hit = (~outside_parallel & (t_enter <= t_leave) & (t_enter >= 0.0)
               & (t_enter < result.fraction[rays]))
        if not hit.any():
            return
        nearer = rays[hit]
        result.fraction[nearer] = t_enter[hit]
        result.normal[nearer] = hull.normals[plane[hit]] @ rotation.T
        result.body[nearer] = hull.body

    def _near_moving(self, starts: np.ndarray, direction: np.ndarray, reach: np.ndarray) -> np.ndarray:
        """Indices of the rays whose segment from t = 0 to t = reach crosses a moving body's bounding box
        (slab test, boxes padded by BOX_PADDING)."""
        if not self._moving:
            return np.zeros(0, dtype=np.int64)
        # A zero component becomes a tiny one: its slab then bounds t by ±huge (outside it) or by
        # nothing (inside), as the limit says, without inf * 0.
        boxes = np.array([p.getAABB(body, link, physicsClientId=self.client) for body, link in self._moving])
        # Only the boxes that overlap the box around every ray's segment can be crossed by one.
        ends = starts + direction * reach[:, None]
        low = np.minimum(starts.min(axis=0), ends.min(axis=0)) - BOX_PADDING
        high = np.maximum(starts.max(axis=0), ends.max(axis=0)) + BOX_PADDING
        boxes = boxes[((boxes[:, 0, :] <= high) & (boxes[:, 1, :] >= low)).all(axis=1)]
        if not len(boxes):
            return np.zeros(0, dtype=np.int64)
        inverse = 1.0 / np.where(direction == 0.0, 1e-30, direction)
        # All boxes against all rays at once: (boxes, rays, 3) slabs.
        t1 = (boxes[:, None, 0, :] - BOX_PADDING - starts) * inverse
        t2 = (boxes[:, None, 1, :] + BOX_PADDING - starts) * inverse
        enter = np.minimum(t1, t2).max(axis=2)
        leave = np.maximum(t1, t2).min(axis=2)
        crossing = ((enter <= leave) & (leave >= 0.0) & (enter <= reach)).any(axis=0)
        return np.flatnonzero(crossing)
