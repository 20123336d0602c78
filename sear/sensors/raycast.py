"""Where the sensors cast their rays: every ray of every sensor due on a tick goes through here in one batch,
the rays of every robot of the world together (RayCaster.cast_together, sear.sensors.suite.update_together).

(The physics casts rays of its own: the raycast vehicle's wheel rays in sear.physics.vehicle and the
terrain height look-ups in sear.physics.world.)

Intel Embree (through `embreex`, sear.sensors.embreescene) casts them, 10-20 times faster than pybullet's
rayTestBatch on the same triangles, in two scenes that every robot's caster of a world shares
(StaticWorld.ray_cache):

- the fixed world (terrain and fixed obstacles, sear.collision.StaticWorld, which
  sear.physics.world.World fills as bodies are added), joined in one scene made once: one Embree call
  per batch. Fixed obstacles added later go to a second, small scene until they hold an eighth of the
  first's triangles, when the two are joined again.
- a paged height-grid terrain (sear.physics.terrainpager; StaticWorld.grid), which is in no Embree scene:
  the rays walk its grid (sear.models.heightgrid.HeightGrid.cast, numba), exact for the triangles of its
  collision tiles, whether or not a tile is loaded where they hit; hits report the grid's body.
- the moving bodies' convex parts: other robots' hulls (their collision margin included) and boxes
  (movable boxes, gripper parts, boxes of any moving body), made again when one of them has moved since
  the last batch of any robot; only the rays that pass through one of their bounding boxes are cast in it.

The arithmetic around Embree's calls (rays to the world frame, hits refined, rays near moving bodies
chosen) is numpy's until the process has cast enough rays to pay for loading numba, then numba's
(sear.sensors.raykernels), with the same hits to the bit.

Each Embree hit is recomputed in float64 (on the plane of the triangle found; for a box, a slab test
against the box itself), so its distance is as exact as pybullet's. pybullet casts only the rays that
pass within 2 mm of a box without meeting it (pybullet's own box test errs by about that much, so such
rays keep its answer) and those near moving shapes that are neither boxes nor hulls (spheres, cylinders,
meshes of URDF links). Without `embreex` (where it cannot be installed), or for a fixed world of more than
MAX_EMBREE_TRIANGLES triangles, every ray goes to pybullet, with one warning per process.

pybullet's rayTestBatch takes at most 16,383 rays per call (a numpy batch of 16,384 or more silently
returns nothing), so batches for it are split; Embree has no such limit.

A robot never sees itself and sees every other robot. All robots share one collision group
(sear.collision), so no ray mask can tell them apart: the caster is told its own robot's bodies and
leaves them out itself. Rays pass through its own parts in the moving scene (and a part every caster
ignores, as the one robot of a one-robot world, is left out of it). A pybullet ray whose first hit is its
own robot is cast again for every hit along it (rayTestBatch's reportHitNumber), and the nearest hit on
anything else wins: the same hit, to the bit, that a collision mask leaving its robot out would give.
A mesh robot's wheels have collision cylinders (links of its body, sear.physics.vehicle): its own
sensors never see them, nor do other robots': the moving scene holds only its hull, and the rays pybullet
casts leave their collision group out (sear.collision.SENSOR_RAY_MASK), so every sensor sees what it saw
before the wheels had bodies.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import pybullet as p

from sear.collision import SENSOR_RAY_MASK, StaticShape, StaticWorld
from sear.sensors.embreescene import (
    BOX_CORNERS,
    BOX_FACES,
    MovingScene,
    TriangleScene,
    embree,
    expanded_hull,
    near_boxes,
)
from sear.sensors.raykernels import Kernels
from sear.sensors.raykernels import count as count_rays

MAX_BATCH = 16_383
"""Most rays pybullet's rayTestBatch casts in one call."""
RAY_THREADS = 0
"""rayTestBatch's numThreads: 0 uses every core (on two cores a 1,132-ray batch takes ~60 % of the
single-threaded time)."""
MAX_EMBREE_TRIANGLES = 1_000_000
"""Fixed worlds of more triangles are cast with pybullet alone: Embree's structure costs ~85 bytes and a
few microseconds of start-up a triangle (a 2049² heightmap's 8.4 M triangles: +700 MB, tens of seconds),
which would break the run's memory and start-up limits for large terrains (large heightmaps and elevation
models are paged grids, which the grid walk casts instead)."""
BOX_PADDING = 0.01
"""Margin added around each moving body's bounding box (m) when choosing the rays pybullet casts too."""
TOP_MARGIN = 1e-3
"""m: how far above the highest moving body, or the paged grid, RayCaster.occluded follows a rising ray."""
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


def _cast_grid(world: StaticWorld, starts: np.ndarray, direction: np.ndarray, result: RayResult) -> None:
    """The rays (world frame, m) against a paged height-grid terrain (StaticWorld.grid), hits nearer than
    `result`'s kept there as hits on the grid's body; hits pybullet found on the grid's collision tiles are
    reported as that body too (they are the same triangles)."""
    grid = world.grid
    if grid is None:
        return
    tiles = np.isin(result.body, np.fromiter(world.grid_bodies, dtype=np.int64))
    result.body[tiles] = world.grid_body
    hit = grid.cast(starts, direction, result.fraction, result.normal)
    result.body[hit] = world.grid_body


def _embree() -> Any:
    """embreex's scene, mesh and device classes, or None where embreex cannot be imported (warned once per
    process)."""
    global _embree_warned
    engine = embree()
    if engine is None and not _embree_warned:
        _embree_warned = True
        warnings.warn("the Embree ray engine (Python package embreex) is not available; the sensors' rays "
                      "are cast with pybullet alone, which is several times slower. Install embreex to "
                      "speed them up.", RuntimeWarning, stacklevel=3)
    return engine


def _rotations(quaternions: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotation matrices of (N, 4) unit quaternions (x, y, z, w), as pybullet's
    getMatrixFromQuaternion gives them."""
    x, y, z, w = quaternions.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1)], axis=1)


class _Part(NamedTuple):
    """A moving body's convex part, in its link's pybullet (centre-of-mass) frame: a robot's hull with its
    margin, or a box made MovingScene.GRAZE larger, with the box itself."""

    body: int
    link: int
    vertices: np.ndarray
    faces: np.ndarray
    box: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    """The box's rotation and centre (m) in the link's frame and its half extents (m); None for a hull."""


class _SharedScenes:
    """The Embree scenes of one world, shared by every caster of it (kept in StaticWorld.ray_cache): the
    fixed world made once (terrain and the obstacles there at the time; fixed obstacles added later go to
    a second, small scene until it holds an eighth as many triangles, when the two are joined again), and
    the moving bodies' convex parts, made again whenever one has moved since the last cast of any robot.
    Moving bodies of other shapes (spheres, cylinders, meshes of URDF links, ...) are in `fallback`: the
    casters cast the rays near those with pybullet too."""

    def __init__(self, client: int, world: StaticWorld, engine: tuple[Any, Any, Any]) -> None:
        self.client = client
        self.world = world
        self.engine = engine
        self.device = engine[2]()
        self.scenes: list[TriangleScene] = []
        """The fixed world's scenes: the joined one (terrain and obstacles), then the added obstacles'."""
        self._base: TriangleScene | None = None
        self._apart: list[TriangleScene] = []
        """The joined scene's terrain and obstacles as two scenes, made when a ray first has to pass a face
        in it (it starts inside a fixed obstacle: see TriangleScene.cast); they give such rays the hit they
        had before the scenes were joined."""
        self._base_shapes: list[StaticShape] = []
        self._version = -1
        self._body_count = -1
        self._viewers: set[frozenset[int]] = set()
        """The bodies each caster using these scenes ignores (its robot's): a body all of them ignore (the
        one robot of a one-robot world) is left out of the moving scene, which then need not be made
        again each time that robot moves."""
        self.parts: list[_Part] = []
        self.fallback: list[tuple[int, int]] = []
        """(body, link) of every moving body part that is neither a known robot hull nor made of boxes."""
        self.moving: MovingScene | None = None
        self._poses: np.ndarray | None = None
        self._ignored_by: dict[bytes, np.ndarray] = {}
        """Each caster's mask of the parts it ignores (MovingScene._ignored), kept while the parts stay."""

    def sync_fixed(self) -> None:
        """Make the fixed world's scenes again after fixed bodies were added or changed."""
        world = self.world
        if world.version == self._version:
            return
        shapes = world.terrain + world.obstacles
        base = self._base_shapes
        if (self._base is not None and len(shapes) > len(base)
                and all(a is b for a, b in zip(base, shapes, strict=False))):
            added = shapes[len(base):]
            if sum(len(s.faces) for s in added) * 8 <= self._base.triangles:
                self.scenes = [self._base, TriangleScene(self.engine, self.device, added, self._base.centre,
                                                         [True] * len(added))]
                self._version = world.version
                return
        self.scenes = []
        if shapes:
            lo = np.min([s.vertices.min(axis=0) for s in shapes], axis=0)
            hi = np.max([s.vertices.max(axis=0) for s in shapes], axis=0)
            solid = [False] * len(world.terrain) + [True] * len(world.obstacles)
            self._base = TriangleScene(self.engine, self.device, shapes, (lo + hi) / 2.0, solid)
            self._base_shapes = list(shapes)
            self._apart = []
            self.scenes = [self._base]
        self._version = world.version

    def cast_fixed(self, starts: np.ndarray, direction: np.ndarray, result: RayResult) -> None:
        """The rays against the fixed world, nearest hits into `result`."""
        for scene in self.scenes:
            if scene is not self._base:
                scene.cast(starts, direction, result)
                continue
            stopped = scene.cast(starts, direction, result, passes=False)
            if not len(stopped):
                continue
            if not self._apart:
                terrain = [s for s in self._base_shapes if s in self.world.terrain]
                obstacles = [s for s in self._base_shapes if s not in self.world.terrain]
                self._apart = [TriangleScene(self.engine, self.device, group, scene.centre, [solid] * len(group))
                               for group, solid in ((terrain, False), (obstacles, True)) if group]
            for apart in self._apart:
                apart.cast(starts, direction, result, rays=stopped)

    def add_viewer(self, ignore: frozenset[int]) -> None:
        """A caster that ignores these bodies casts in these scenes (see `_viewers`)."""
        if ignore not in self._viewers:
            self._viewers.add(ignore)
            self._body_count = -1  # sort the parts again

    def sync_moving(self) -> MovingScene | None:
        """The scene of the moving bodies' convex parts where they are now (None without any)."""
        count = p.getNumBodies(physicsClientId=self.client)
        if count != self._body_count:
            self._list_parts(count)
        if not self.parts:
            self.moving = None
            return None
        poses = []
        for body, link in self._links:
            if link < 0:
                position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=self.client)
                poses.append((*position, *orientation))
            else:
                state = p.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=self.client)
                poses.append((*state[0], *state[1]))
        pose = np.array(poses)
        if self.moving is not None and self._poses is not None and np.array_equal(pose, self._poses):
            return self.moving
        of_part = pose[self._link_of_part]
        rotation = _rotations(of_part[:, 3:])
        shapes, boxes = [], []
        for part, r, position in zip(self.parts, rotation, of_part[:, :3], strict=True):
            shapes.append(StaticShape(part.body, part.vertices @ r.T + position, part.faces))
            boxes.append(None if part.box is None else
                         (r @ part.box[0], position + r @ part.box[1], part.box[2]))
        self.moving = MovingScene(self.engine, self.device, shapes, boxes)
        self.moving._ignored_by = self._ignored_by  # the same parts in the same order: the same masks
        self._poses = pose
        return self.moving

    def _list_parts(self, count: int) -> None:
        """Sort every moving body's parts into convex ones (robot hulls, boxes) and the rest (fallback)."""
        fixed = self.world.bodies
        parts: list[_Part] = []
        fallback: list[tuple[int, int]] = []
        for i in range(count):
            body = p.getBodyUniqueId(i, physicsClientId=self.client)
            if body in fixed or (self._viewers and all(body in seen for seen in self._viewers)):
                continue
            joints = p.getNumJoints(body, physicsClientId=self.client)
            hull = self.world.robots.get(body)
            if hull is not None:  # a mesh robot: its hull; its links are its wheels' bodies, left out here
                inside = hull.vertices.mean(axis=0)
                try:
                    vertices, faces = expanded_hull(hull.normals, hull.offsets, inside)
                except Exception:  # qhull's errors have no common type: pybullet casts near it
                    fallback.append((body, -1))
                    continue
                parts.append(_Part(body, -1, vertices, faces, None))
                continue
            boxes = self._boxes(body, joints)
            if boxes is None:
                fallback.extend((body, link) for link in range(-1, joints))
            else:
                parts.extend(boxes)
        self.parts, self.fallback = parts, fallback
        self._ignored_by = {}
        self._links = sorted({(part.body, part.link) for part in parts})
        where = {key: i for i, key in enumerate(self._links)}
        self._link_of_part = np.array([where[(part.body, part.link)] for part in parts], dtype=np.int64)
        self._poses = None
        self._body_count = count

    def _boxes(self, body: int, joints: int) -> list[_Part] | None:
        """The body's links as boxes (each in its link's centre-of-mass frame), or None when any collision
        shape of it is not a box. pybullet keeps a box's collision margin inside it: no margin here."""
        boxes = []
        for link in range(-1, joints):
            for shape in p.getCollisionShapeData(body, link, physicsClientId=self.client):
                if shape[2] != p.GEOM_BOX:
                    return None
                half = np.asarray(shape[3], dtype=float) / 2.0
                position = np.asarray(shape[5], dtype=float)
                rotation = _rotations(np.array([shape[6]], dtype=float))[0]
                corners = (BOX_CORNERS * (half + MovingScene.GRAZE)) @ rotation.T + position
                boxes.append(_Part(body, link, corners, BOX_FACES, (rotation, position, half)))
        return boxes


class RayCaster:
    """Casts batches of rays in a pybullet client, ignoring the given (robot) bodies.

    With `static_world` (the fixed bodies' triangles) and embreex importable, the rays are cast with
    Embree: the fixed world, then the moving bodies' convex parts (other robots' hulls, boxes) for the rays
    that pass near them, and pybullet only for the rays near moving bodies of other shapes; otherwise (or
    with `engine="pybullet"`) every ray with pybullet."""

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
        self._shared: _SharedScenes | None = None

    @property
    def engines(self) -> str:
        """'embree+pybullet' (Embree, and pybullet near moving bodies it does not hold) or 'pybullet':
        which engines cast the rays."""
        return "embree+pybullet" if self.embree is not None else "pybullet"

    def cast(self, starts: np.ndarray | list, ends: np.ndarray | list, parent: int | None = None) -> RayResult:
        """Cast rays from starts to ends ((N, 3), m): in the world frame, or with `parent` in the frame of
        that body (its centre-of-mass frame, as pybullet reports its pose). Returns each ray's hit fraction
        of its length (1.0 for a miss), the surface normal and the body hit."""
        return RayCaster.cast_together([(self, starts, ends, parent)])[0]

    @staticmethod
    def cast_together(batches: Sequence[tuple[RayCaster, np.ndarray | list, np.ndarray | list, int | None]]
                      ) -> list[RayResult]:
        """Each batch (caster, starts, ends, parent) cast as `cast` casts it, the batches of casters that
        share their Embree scenes (the robots of one world) in one Embree call of the fixed world and with
        the moving bodies' poses read once: the same hits, ray by ray, as a cast of each."""
        results: list[RayResult | None] = [None] * len(batches)
        joined: list[tuple[int, RayCaster, np.ndarray, np.ndarray, np.ndarray]] = []
        shared: _SharedScenes | None = None
        compiled = None
        rays = [(np.ascontiguousarray(starts, dtype=np.float64).reshape(-1, 3),
                 np.ascontiguousarray(ends, dtype=np.float64).reshape(-1, 3)) for _, starts, ends, _ in batches]
        total = sum(len(begin) for begin, _ in rays)
        for i, ((caster, _, _, parent), (begin, end)) in enumerate(zip(batches, rays, strict=True)):
            scenes = caster._sync() if caster.embree is not None else None
            if scenes is None or (shared is not None and scenes is not shared):
                if scenes is None:
                    results[i] = caster._pybullet(begin, end, parent)
                    if caster.static_world is not None and caster.static_world.grid is not None:
                        world_begin, _, world_direction = caster._world_rays(begin, end, parent, None)
                        _cast_grid(caster.static_world, world_begin, world_direction, results[i])  # type: ignore[arg-type]
                else:
                    results[i] = caster.cast(begin, end, parent)
                continue
            if shared is None:
                shared, compiled = scenes, count_rays(total)
            joined.append((i, caster, *caster._world_rays(begin, end, parent, compiled)))
        if shared is None:
            return results  # type: ignore[return-value]
        begin = np.concatenate([j[2] for j in joined]) if len(joined) > 1 else joined[0][2]
        direction = np.concatenate([j[4] for j in joined]) if len(joined) > 1 else joined[0][4]
        n = len(begin)
        result = RayResult(np.ones(n), np.zeros((n, 3)), np.full(n, -1, dtype=np.int64))
        shared.cast_fixed(begin, direction, result)
        _cast_grid(shared.world, begin, direction, result)
        moving = shared.sync_moving()
        ends = np.cumsum([len(j[2]) for j in joined])
        spans = list(zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True))
        grazes_of: list[np.ndarray | None] = [None] * len(joined)
        if moving is not None and len(joined) > 1 and compiled is not None:
            grazes_of = RayCaster._cast_moving_grouped(moving, joined, spans, begin, direction, result)
        for (i, caster, own_begin, own_end, own_direction), (lo, hi), grazes in zip(joined, spans, grazes_of,
                                                                                     strict=True):
            own = RayResult(result.fraction[lo:hi], result.normal[lo:hi], result.body[lo:hi])
            caster._cast_moving(shared, moving, own_begin, own_end, own_direction, own, grazes)
            results[i] = own
        return results  # type: ignore[return-value]

    def occluded(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """(N,) bool: whether each ray from starts to ends ((N, 3), world frame, m) meets anything but the
        ignored bodies: `cast(starts, ends).fraction < 1`, for rays that need no more (a shadow ray: is the
        sun hidden?). The fixed world's scenes answer with Embree's occlusion query (first triangle found,
        no distance: TriangleScene.occluded); only the rays they leave open go to the paged grid and the
        moving bodies, exactly as `cast` casts them there."""
        starts = np.ascontiguousarray(starts, dtype=np.float64).reshape(-1, 3)
        ends = np.ascontiguousarray(ends, dtype=np.float64).reshape(-1, 3)
        shared = self._sync() if self.embree is not None else None
        if shared is None:
            return self.cast(starts, ends).fraction < 1.0
        direction = ends - starts
        blocked: np.ndarray | None = None
        for scene in shared.scenes:
            if blocked is None:
                blocked = scene.occluded(starts, direction)
                continue
            open_rays = np.flatnonzero(~blocked)
            if len(open_rays):
                blocked[open_rays[scene.occluded(starts[open_rays], direction[open_rays])]] = True
        if blocked is None:
            blocked = np.zeros(len(starts), dtype=bool)
        moving = shared.sync_moving()
        if shared.world.grid is None and moving is None and not shared.fallback:
            return blocked
        # The rest as `cast` casts them, a blocked ray's reach 0: it is left out of every test. A rising
        # ray can meet none of them once above the highest of them: its reach ends there, and the moving
        # bodies' boxes are tested against that much shorter segment (a shadow ray is 1 km long).
        count_rays(len(starts))
        n = len(starts)
        reach = np.where(blocked, 0.0, 1.0)
        top = self._top(shared, moving)
        rising = direction[:, 2] > 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            leave = np.where(rising, (top + TOP_MARGIN - starts[:, 2]) / direction[:, 2], 1.0)
        np.minimum(reach, np.maximum(leave, 0.0), out=reach)
        result = RayResult(reach.copy(), np.zeros((n, 3)), np.full(n, -1, dtype=np.int64))
        _cast_grid(shared.world, starts, direction, result)
        self._cast_moving(shared, moving, starts, ends, direction, result)
        return blocked | (result.fraction < reach)

    def _top(self, shared: _SharedScenes, moving: MovingScene | None) -> float:
        """m: the highest point of the paged grid, of the moving bodies this caster sees and of those
        pybullet casts (their bounding boxes)."""
        tops = [-np.inf]
        if shared.world.grid is not None:
            tops.append(float(shared.world.grid.blocks()[1].max()))
        if moving is not None and len(moving.part_high):
            tops.append(float(moving.part_high[:, 2].max()))
        tops.extend(p.getAABB(body, link, physicsClientId=self.client)[1][2] + BOX_PADDING
                    for body, link in shared.fallback if body not in self.ignore)
        return max(tops)

    @staticmethod
    def _cast_moving_grouped(moving: MovingScene,
                             joined: list[tuple[int, RayCaster, np.ndarray, np.ndarray, np.ndarray]],
                             spans: list[tuple[int, int]], begin: np.ndarray, direction: np.ndarray,
                             result: RayResult) -> list[np.ndarray | None]:
        """Every joined caster's rays (world frame, at `spans` of `begin`/`direction`, their fixed-world hits
        in `result`) against the moving scene in one cast (MovingScene.cast_grouped): each caster's rays
        near a body it sees, each passing its own robot's parts. Returns each caster's grazes (indices into
        its own rays), for its pybullet fallback (`_cast_moving`).

        Why: with 100 robots, a cast per caster (Embree's scene run and the kernel's call, a few passes
        each) cost ~250 µs of call overhead each, 100 times per sample tick; the hits are the same ray by
        ray, every ray's cast being independent of the others'."""
        rays = []
        for (_, caster, own_begin, _, own_direction), (lo, hi) in zip(joined, spans, strict=True):
            near = moving.near(own_begin, own_direction, result.fraction[lo:hi], caster._ignored)
            if len(near):
                rays.append(near + lo)
        grazes = np.zeros(0, dtype=np.int64)
        if rays:
            lengths = [hi - lo for lo, hi in spans]
            ray_group = np.repeat(np.arange(len(joined), dtype=np.int64), lengths)
            grazes = moving.cast_grouped(begin, direction, result, np.concatenate(rays), ray_group,
                                         [caster._ignored for _, caster, *_ in joined])
        return [grazes[(grazes >= lo) & (grazes < hi)] - lo for lo, hi in spans]

    def _world_rays(self, begin: np.ndarray, end: np.ndarray, parent: int | None, compiled: Kernels | None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Starts, ends and directions (end - start) of rays in the world frame (m), given in it or (with
        `parent`) in that body's frame."""
        if parent is None:
            return begin, end, end - begin
        position, orientation = p.getBasePositionAndOrientation(parent, physicsClientId=self.client)
        rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
        if compiled is not None:
            n = len(begin)
            starts, ends, direction = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
            compiled.to_world(begin, end, rotation, np.asarray(position), starts, ends, direction)
            return starts, ends, direction
        starts, ends = begin @ rotation.T + position, end @ rotation.T + position
        return starts, ends, ends - starts

    def _cast_moving(self, shared: _SharedScenes, moving: MovingScene | None, begin: np.ndarray, end: np.ndarray,
                     direction: np.ndarray, result: RayResult, cast: np.ndarray | None = None) -> None:
        """This caster's rays (world frame, their fixed-world hits in `result`) against the moving bodies it
        sees: the moving scene, then pybullet near the bodies Embree does not hold and for grazes. `cast`:
        the grazes of the moving scene's cast where it has been cast already (`_cast_moving_grouped`)."""
        grazes = np.zeros(0, dtype=np.int64) if cast is None else cast
        if moving is not None and cast is None:
            near = moving.near(begin, direction, result.fraction, self._ignored)
            if len(near):
                grazes = moving.cast(begin, direction, result, rays=near, ignore=self._ignored)
        fallback = [part for part in shared.fallback if part[0] not in self.ignore]
        near = self._near_moving(fallback, begin, direction, result.fraction)
        if len(grazes):
            near = np.union1d(near, grazes)
        if len(near):
            extra = self._pybullet(begin[near], end[near], None)
            nearer = extra.fraction < result.fraction[near]
            rays = near[nearer]
            result.fraction[rays] = extra.fraction[nearer]
            result.normal[rays] = extra.normal[nearer]
            result.body[rays] = extra.body[nearer]

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
                                          numThreads=RAY_THREADS, collisionFilterMask=SENSOR_RAY_MASK,
                                          physicsClientId=self.client, **options))
        fraction = np.fromiter(map(_FRACTION, results), dtype=np.float64, count=n)
        body = np.fromiter(map(_BODY, results), dtype=np.int64, count=n)
        normal = np.fromiter(chain.from_iterable(map(_NORMAL, results)), dtype=np.float64, count=3 * n)
        return RayResult(fraction, normal.reshape(n, 3), body)

    def _sync(self) -> _SharedScenes | None:
        """The world's shared Embree scenes, the fixed ones up to date; None (and pybullet from now on) when
        the fixed world has more than MAX_EMBREE_TRIANGLES triangles."""
        world = self.static_world
        assert world is not None and self.embree is not None
        shared = self._shared
        if shared is None or shared._version != world.version:
            if sum(len(s.faces) for s in world.terrain + world.obstacles) > MAX_EMBREE_TRIANGLES:
                self.embree = None
                return None
            if shared is None:
                found = world.ray_cache.get("embree")
                if not isinstance(found, _SharedScenes) or found.client != self.client:
                    found = world.ray_cache["embree"] = _SharedScenes(self.client, world, self.embree)
                shared = self._shared = found
                shared.add_viewer(frozenset(self.ignore))
            shared.sync_fixed()
        return shared

    def _near_moving(self, parts: list[tuple[int, int]], starts: np.ndarray, direction: np.ndarray,
                     reach: np.ndarray) -> np.ndarray:
        """Indices of the rays whose segment from t = 0 to t = reach crosses the bounding box of one of the
        moving body `parts` ((body, link)), padded by BOX_PADDING."""
        if not parts:
            return np.zeros(0, dtype=np.int64)
        boxes = np.array([p.getAABB(body, link, physicsClientId=self.client) for body, link in parts])
        return near_boxes(starts, direction, reach, boxes[:, 0] - BOX_PADDING, boxes[:, 1] + BOX_PADDING)
