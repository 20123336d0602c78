"""Collision filter group bits shared by the physics bodies and the sensors' rays.

A model-layer module so that sear.physics (which gives the bodies their groups) and the ray module in
sear.sensors (which casts the sensors' rays) agree on the bits without one importing the other.

Every robot's bodies share one group, ROBOT_COLLISION_GROUP, however many robots a world holds: robots
collide with each other, the terrain and the obstacles, and the wheels' suspension rays leave all robots
out (NOT_ROBOTS_MASK). A robot's sensors see every other robot and never their own: the ray caster
(sear.sensors.raycast) knows each robot's bodies and drops hits on its own robot after the cast, so no
group bit per robot is needed and nothing caps the number of robots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sear.models.heightgrid import HeightGrid

ROBOT_COLLISION_GROUP = 0x40
"""Collision filter group bit of every robot's bodies (chassis, URDF links, gripper). Not 1 or 2: Bullet
gives dynamic bodies group 1 and static ones group 2 (StaticFilter)."""
ROBOT_BODY_MASK = 0x7FFFFFFF
"""A robot body's mask: it collides with everything, other robots included."""
WHEEL_COLLISION_GROUP = 0x100
"""Collision filter group bit of a mesh robot's wheel bodies (the collision cylinders of
sear.physics.vehicle) instead of ROBOT_COLLISION_GROUP: no ray of a wheel (NOT_ROBOTS_MASK) or of a sensor
(SENSOR_RAY_MASK) meets them, and the terrain leaves them out (TERRAIN_COLLISION_MASK)."""
NOT_ROBOTS_MASK = 0xFFFF & ~(ROBOT_COLLISION_GROUP | WHEEL_COLLISION_GROUP)
"""A ray mask that leaves out every robot, its wheel bodies (WHEEL_COLLISION_GROUP) too: a wheel's
suspension ray."""

TERRAIN_COLLISION_GROUP = 0x80
"""Extra collision group bit of terrain bodies, so height queries can hit the terrain alone."""
STATIC_COLLISION_GROUP = 0x2
"""Collision filter group bit of every fixed body: terrain tiles, walls, trees, mass-0 boxes. It is Bullet's
own StaticFilter bit. Fixed bodies carry STATIC_COLLISION_MASK, so Bullet never pairs two fixed bodies:
without that, each fixed obstacle is tested against the terrain on every physics step (100 walls made the
demo 10-12x slower). Moving bodies (group 1, Bullet's default, and the robot) collide with everything."""
STATIC_COLLISION_MASK = 0xFFFF & ~(STATIC_COLLISION_GROUP | TERRAIN_COLLISION_GROUP)
"""pybullet pairs two bodies when either one's group meets the other's mask (its filter ORs the two
tests), so the mask of fixed bodies leaves out every bit a fixed body can carry, the terrain's too."""
TERRAIN_COLLISION_MASK = STATIC_COLLISION_MASK & ~WHEEL_COLLISION_GROUP
"""The terrain's mask: a fixed body's, less the wheel bodies' group."""
WHEEL_BODY_MASK = ROBOT_BODY_MASK & ~(STATIC_COLLISION_GROUP | TERRAIN_COLLISION_GROUP)
"""A wheel body's mask: no fixed body's bits. With TERRAIN_COLLISION_MASK the wheel bodies meet the
terrain by neither of pybullet's two tests, so the suspension rays alone carry the robot over the ground;
a wall, a tree or a fixed box still pairs with them through its own mask (STATIC_COLLISION_MASK has the
wheels' bit), and other robots and movable bodies through both."""
SENSOR_RAY_MASK = ROBOT_BODY_MASK & ~WHEEL_COLLISION_GROUP
"""The mask of the sensors' pybullet rays: everything but the wheel bodies, which the sensors' Embree
scenes do not hold either (a robot's sensors see other robots' hulls, as before the wheels had bodies)."""


class StaticShape:
    """One fixed body's surface as triangles in the world frame (m): what the ray caster's static engine
    casts against instead of asking pybullet."""

    __slots__ = ("body", "faces", "margin", "vertices")

    def __init__(self, body: int, vertices: np.ndarray, faces: np.ndarray, margin: float = 0.0) -> None:
        self.body = body
        """The pybullet body id of the shape (what a hit on it reports)."""
        self.vertices = vertices
        """(V, 3) float64 vertices, world frame, m."""
        self.faces = faces
        """(F, 3) vertex indices of the triangles."""
        self.margin = margin
        """How far outside the triangles pybullet's surface lies, m: a convex hull's collision margin
        (boxes and cylinders keep theirs inside; the terrain has none)."""


class RobotHull:
    """A robot's body as the convex hull pybullet collides it with, as planes in its pybullet (centre of
    mass) frame: what the ray caster puts in its scene of moving bodies (the planes' polytope, margin
    included), so other robots' rays meet it exactly and without pybullet."""

    __slots__ = ("body", "faces", "margin", "normals", "offsets", "radius", "vertices")

    def __init__(self, body: int, vertices: np.ndarray, faces: np.ndarray, margin: float = 0.0) -> None:
        """`vertices` (V, 3) m and `faces` (F, 3) of the convex hull, in the body's pybullet frame, its faces
        wound outwards; `margin` (m): how far outside them pybullet's surface lies."""
        self.body = body
        self.vertices = np.asarray(vertices, dtype=np.float64)
        """(V, 3) the hull's vertices in the body's pybullet frame, m: what the ray caster's Embree scene
        of moving bodies is made of."""
        self.faces = np.asarray(faces)
        """(F, 3) vertex indices of its triangles, wound outwards."""
        self.margin = margin
        """m: how far outside the triangles pybullet's surface lies."""
        corners = self.vertices[self.faces]
        normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        lengths = np.linalg.norm(normals, axis=1)
        keep = lengths > 1e-12
        normals = normals[keep] / lengths[keep, None]
        offsets = np.einsum("ij,ij->i", normals, corners[keep, 0]) + margin
        # Coplanar triangles give the same plane: one of each is enough.
        _, first = np.unique(np.round(np.column_stack([normals, offsets]), 9), axis=0, return_index=True)
        self.normals = np.ascontiguousarray(normals[np.sort(first)])
        """(P, 3) outward unit normals of the hull's planes."""
        self.offsets = np.ascontiguousarray(offsets[np.sort(first)])
        """(P,) n·x at each plane, m: a point is inside when n·x <= offset for every plane."""
        self.radius = float(np.linalg.norm(vertices, axis=1).max()) + margin
        """m: the hull lies within this distance of the frame's origin."""


class StaticWorld:
    """The fixed bodies of a world as triangle meshes, kept by sear.physics.world.World as it adds them and
    read by sear.sensors.raycast. `terrain` is set once; `obstacles` grow as user code adds fixed ones, and
    `version` counts the changes so the caster knows when to rebuild what it made from them."""

    def __init__(self) -> None:
        self.terrain: list[StaticShape] = []
        self.obstacles: list[StaticShape] = []
        self.version = 0
        self.robots: dict[int, RobotHull] = {}
        """The robots' bodies by pybullet id: moving, but convex and known, so the ray caster puts their
        hulls in its scene of moving bodies (sear.sensors.raycast)."""
        self.grid: HeightGrid | None = None
        """A paged height-grid terrain (sear.physics.terrainpager), which the ray caster casts against as a
        grid (HeightGrid.cast) rather than as triangles in `terrain`; None otherwise."""
        self.grid_body = -1
        """The pybullet body that stands for `grid` in ray hits."""
        self.grid_bodies: set[int] = set()
        """The grid's body and its collision tiles in pybullet now (kept by the world as tiles come and go)."""
        self.colours: dict[int, tuple[float, float, float]] = {}
        """The colour (RGB 0..1, sear.colours) of each body by pybullet id, terrain, obstacles and robots
        alike, as the window draws them: what an RGB camera (sear.sensors.rgb_camera) sees."""
        self.terrain_colours: np.ndarray | None = None
        """(N, 3) colour (RGB 0..1) of each vertex of the terrain's shape, when one is set."""
        self.colour_version = 0
        """Counts the changes of `colours` and `terrain_colours` (set_colour, set_terrain_colours)."""
        self.ray_cache: dict[str, object] = {}
        """What the sensors' ray casters of this world share (one scene of the moving bodies, made once
        per pose change for every robot's sensors), kept here by sear.sensors.raycast."""

    def add_terrain(self, shape: StaticShape) -> None:
        self.terrain.append(shape)
        self.version += 1

    def set_grid(self, body: int, grid: HeightGrid) -> None:
        """The terrain is the height grid `grid`, which ray hits report as `body`."""
        self.grid, self.grid_body, self.grid_bodies = grid, body, {body}
        self.version += 1

    def add_obstacle(self, shape: StaticShape) -> None:
        self.obstacles.append(shape)
        self.version += 1

    def set_colour(self, body: int, colour: tuple[float, float, float] | tuple[float, ...]) -> None:
        """Body `body` is drawn (and seen by cameras) in `colour` (RGB 0..1; an alpha is dropped)."""
        self.colours[body] = (float(colour[0]), float(colour[1]), float(colour[2]))
        self.colour_version += 1

    def set_terrain_colours(self, colours: np.ndarray) -> None:
        """The terrain shape's vertex colours ((N, 3) RGB 0..1)."""
        self.terrain_colours = np.asarray(colours, dtype=float)
        self.colour_version += 1

    @property
    def bodies(self) -> set[int]:
        """The pybullet ids of every fixed body held here."""
        return {s.body for s in self.terrain} | {s.body for s in self.obstacles} | self.grid_bodies
