"""The simulated world: terrain, the robot and obstacles in one pybullet physics client.

World frame ENU (x east, y north, z up, metres) with the origin at the terrain centre: x = y = 0 is the
middle of the terrain's bounding box and z = 0 is the terrain model's z = 0. The project's `<altitude>`
is the altitude above sea level of the terrain's surface at that centre (docs/project-format.md), so
the geodetic origin of the world frame lies the surface height at (0, 0) below it (`geodetic_origin`).
The world steps at a fixed rate (the project's physics_hz); each step applies the vehicle's forces,
then steps pybullet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p

from sear.collision import (
    STATIC_COLLISION_GROUP,
    STATIC_COLLISION_MASK,
    TERRAIN_COLLISION_GROUP,
    TERRAIN_COLLISION_MASK,
    RobotHull,
    StaticShape,
    StaticWorld,
)
from sear.colours import robot_colour, terrain_colours
from sear.errors import ProjectError
from sear.geo import geodetic_to_enu
from sear.gravity import GRAVITY
from sear.models.loaded import Models, RobotModels
from sear.models.meshfiles import make_tree
from sear.models.robotdesc.model import RobotDescription
from sear.physics import tyre
from sear.physics.gripper import GripperBody
from sear.physics.meshes import create_terrain_bodies
from sear.physics.robot import build_vehicle
from sear.physics.settle import preroll, settle
from sear.physics.terrainpager import Paging, TerrainPager
from sear.physics.urdf import UrdfVehicle
from sear.physics.vehicle import WHEEL_RAY_MASK, Vehicle, WheelBatch
from sear.project import Body, Project, Robot
from sear.scene import MAX_SHELF_LEVELS, Box, Scene, Shelf, Table, Tree, Wall, shelf_parts, table_parts
from sear.scene import TABLE_LEG as TABLE_LEG  # the table's sizes live in sear.scene, shared with the editor
from sear.scene import TABLE_TOP as TABLE_TOP

if TYPE_CHECKING:
    import trimesh

TRUNK_SECTIONS = 128
"""Sides of the prism that stands for a tree trunk (a pybullet cylinder) in the ray caster's static world:
its faces lie at most 0.15 m x (1 - cos(180°/128)) = 0.05 mm inside the cylinder, 3.7 mm from an edge."""
TRUNK_RADIUS = 0.15
"""Radius of a tree's trunk (sear.models.meshfiles.make_tree draws the same tree), m."""
FALL_DEPTH = 5.0
"""The world's edge: a robot whose centre of mass is this far (m) below the terrain's lowest point has driven
over the terrain's edge (there is no ground beyond it) and is put back at its start pose; about one
second of free fall. Inside the terrain nothing ever reaches that depth, so the edge changes nothing there."""


@dataclass
class Obstacle:
    """Something user code added. `mesh` is its shape in its own body frame, for drawing."""

    kind: str
    """'tree', 'box', 'wall', 'table' or 'shelf'."""
    body_ids: list[int]
    """pybullet bodies; the first one carries the pose used for drawing."""
    mesh: trimesh.Trimesh
    dynamic: bool = False
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Bounding size (x, y, z), m."""
    colour: tuple[float, float, float, float] = field(default=(0.6, 0.6, 0.6, 1.0))
    name: str = ""
    """The name a project's <world> gives it ('' for one user code added)."""

    @property
    def body_id(self) -> int:
        return self.body_ids[0]


class World:
    """Terrain, vehicles and obstacles of a project in a pybullet client (DIRECT unless one is given),
    built from the project's `models` as loaded (sear.loading reads them once, for checking and running;
    nothing is read or derived again here)."""

    def __init__(self, project: Project, models: Models, *, connection: int | None = None,
                 paging: Paging | None = None) -> None:
        """`paging`: page a height-grid terrain in tiles of these sizes (sear.physics.terrainpager) even when
        it is small enough to be one mesh; grids too large for one mesh are always paged (Paging())."""
        self.project = project
        self._own_client = connection is None
        self.client = p.connect(p.DIRECT) if connection is None else connection
        self.dt = 1.0 / project.simulation.physics_hz
        self.time = 0.0
        self.obstacles: list[Obstacle] = []
        self._draw_offsets: dict[int, np.ndarray] = {}
        self.static_world = StaticWorld()
        """Every fixed body's triangles in the world frame, for the sensors' ray caster."""
        p.resetSimulation(physicsClientId=self.client)
        p.setGravity(0, 0, -GRAVITY, physicsClientId=self.client)
        p.setPhysicsEngineParameter(fixedTimeStep=self.dt, numSubSteps=0, physicsClientId=self.client)
        try:
            self.terrain = models.terrain
            self.pager: TerrainPager | None = None
            """The terrain's collision tiles around the moving bodies, for a paged height grid; else None."""
            grid = self.terrain.grid
            if grid is not None and (self.terrain.mesh is None or paging is not None):
                self.pager = TerrainPager(self.client, grid, paging or Paging(), self.terrain.source)
                # A body without a shape stands for the terrain in ray hits (its tiles come and go).
                self.terrain_ids = [p.createMultiBody(baseMass=0, baseCollisionShapeIndex=-1,
                                                      physicsClientId=self.client)]
                self.static_world.set_grid(self.terrain_ids[0], grid)
            else:
                self.terrain_ids = create_terrain_bodies(self.client, self.terrain)
                for tid in self.terrain_ids:
                    p.setCollisionFilterGroupMask(tid, -1, STATIC_COLLISION_GROUP | TERRAIN_COLLISION_GROUP,
                                                  TERRAIN_COLLISION_MASK, physicsClientId=self.client)
            self.geodetic_origin = self._geodetic_origin()
            self.vehicles: list[Vehicle | UrdfVehicle] = []
            """Every robot's vehicle, in Project.robots' order (built by sear.physics.robot.build_vehicle)."""
            self.start_poses: list[tuple[np.ndarray, np.ndarray]] = []
            """Every robot's start position (m) and orientation (quaternion), in the same order."""
            self.descriptions: list[RobotDescription | None] = []
            """Every robot's URDF description (None for a mesh body), in the same order."""
            self.grippers: dict[int, GripperBody] = {}
            """The grippers (sear.physics.gripper) of the robots whose body has one, by robot index."""
            for index, robot in enumerate(project.robots):
                self._build_vehicle(index, robot, models.robots[index])
            self._mesh_vehicles = [v for v in self.vehicles if isinstance(v, Vehicle)]
            """The mesh vehicles: step() casts all their wheel rays in one batch when there are several."""
            self._wheel_batch: WheelBatch | None = None
            """With several mesh vehicles, once compiled tyre kernels run: their update in one batch."""
            self.fell: list[int] = []
            """The robots (indices) that fell off the terrain's edge on the last step."""
            self.fall_height = float(self.terrain.bounds[0][2]) - FALL_DEPTH
            """z (m) below which the robot has fallen off the world (FALL_DEPTH)."""
            self.falls: list[tuple[float, float, float]] = []
            """(time s, x m, y m) of every fall off the terrain's edge: when the robot was put back, and the
            point of the terrain's edge nearest to where it fell."""
            if self.terrain.mesh is not None and self.pager is None:
                # The terrain's tiles share one triangle set here: hits on the terrain report its first body.
                self.static_world.add_terrain(StaticShape(self.terrain_ids[0], np.asarray(self.terrain.mesh.vertices),
                                                          np.asarray(self.terrain.mesh.faces)))
                self.static_world.set_terrain_colours(terrain_colours(np.asarray(self.terrain.mesh.vertices),
                                                                      self.terrain.vertex_colors))
            for tid in self.terrain_ids:
                self.static_world.set_colour(tid, (0.5, 0.5, 0.5))
            if project.world is not None:
                self.build_scene(project.world)
        except BaseException:
            self.close()
            raise

    def _geodetic_origin(self) -> tuple[float, float, float]:
        """Latitude, longitude (decimal degrees) and altitude above sea level (m) of the world origin
        (x = y = z = 0): `<altitude>` belongs to the terrain's surface at the centre, which is
        terrain_height(0, 0) m above z = 0 (0 when no terrain lies under the centre)."""
        t = self.project.terrain
        return (t.latitude, t.longitude, t.altitude - self.terrain_height(0.0, 0.0))

    # --- vehicle -----------------------------------------------------------------------------------

    def _build_vehicle(self, index: int, robot: Robot, models: RobotModels) -> Vehicle | UrdfVehicle:
        """Robot `index`'s vehicle (and gripper) at its start pose, added to `vehicles` and `start_poses`."""
        start = self._start_pose(robot.body, -models.lowest)
        self.descriptions.append(models.description)
        vehicle = build_vehicle(self.client, robot, models, tuple(start[0]), tuple(start[1]))
        if isinstance(vehicle, UrdfVehicle) and not robot.body.drop_start:
            # Its wheels are bodies on joints, which Bullet's contacts carry: set down on the ground, it
            # comes to rest in a pre-roll before t = 0 (sear.physics.settle.preroll).
            start = preroll(vehicle, self.client, self.dt) or self._dropped(vehicle, robot, models)
        elif isinstance(vehicle, Vehicle) and not robot.body.drop_start:
            settled = settle(vehicle, tuple(start[0]), tuple(start[1]), self.dt)
            if settled is None:  # the wheels cannot carry it (its body reaches the ground first; a wheel over
                # an edge): set down on its body's lowest point and pre-rolled to rest, else dropped
                vehicle.reset(tuple(self._on_body(vehicle, start)), tuple(start[1]))
                start = preroll(vehicle, self.client, self.dt) or self._dropped(vehicle, robot, models)
            else:
                start = settled
        self.start_poses.append(start)
        self.vehicles.append(vehicle)
        self.static_world.set_colour(vehicle.body_id, robot_colour(index))
        if robot.body.gripper is not None:
            if not isinstance(vehicle, Vehicle):
                raise ProjectError("the gripper accessory fits robots built from a body mesh and wheel "
                                   "models; a robot from a URDF brings its own links: untick Gripper on the "
                                   "Robot Body Model tab, or model the gripper in the URDF.",
                                   file=self.project.path, field="body.gripper")
            self.grippers[index] = GripperBody(self.client, vehicle, robot.body.gripper)
        if isinstance(vehicle, Vehicle):
            try:  # the other robots' rays test this hull themselves (a flat model has none: pybullet casts them)
                with np.errstate(all="ignore"):
                    hull = vehicle.body_mesh.convex_hull
                margin = p.getDynamicsInfo(vehicle.body_id, -1, physicsClientId=self.client)[11]
                self.static_world.robots[vehicle.body_id] = RobotHull(
                    vehicle.body_id, np.asarray(hull.vertices) - vehicle.cog, np.asarray(hull.faces), margin)
            except Exception:  # qhull's errors have no common type
                pass
        return vehicle

    def _on_body(self, vehicle: Vehicle, start: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The body frame origin (m) of `start` lowered until the lowest point of the chassis' own mesh, turned
        by the start's orientation, is on the ground under the origin (`start` has the wheels' bottoms
        there). A robot whose body reaches the ground before its wheels' bump stops do rests on its body: set
        down there, it starts its pre-roll at rest on the ground rather than falling the suspension's travel
        onto it (which a pre-roll on undamped springs did not always bring back to rest in its time)."""
        position, orientation = start
        rotation = np.array(p.getMatrixFromQuaternion(tuple(float(v) for v in orientation))).reshape(3, 3)
        bottom = float((np.asarray(vehicle.body_mesh.vertices) @ rotation.T)[:, 2].min())
        ground = self.terrain_height(float(position[0]), float(position[1]))
        return np.array([position[0], position[1], min(float(position[2]), ground - bottom)])

    def _dropped(self, vehicle: Vehicle | UrdfVehicle, robot: Robot, models: RobotModels
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Where a settled start found no rest (a pre-roll that did not come to rest: a wheel over an edge):
        `vehicle` put at its drop start's pose (position m, quaternion), which is returned."""
        start = self._start_pose(replace(robot.body, drop_start=True), -models.lowest)
        vehicle.reset(tuple(start[0]), tuple(start[1]))
        return start

    def _start_pose(self, body: Body, clearance: float) -> tuple[np.ndarray, np.ndarray]:
        """Body frame origin and orientation at the start, the body frame `clearance` m above the robot's
        lowest point (RobotModels.lowest). With Drop start (`body.drop_start`), that point `start_altitude`
        above the terrain (relative start) or at the given altitude above sea level (absolute start);
        otherwise on the terrain (a mesh vehicle, then settled on its springs: sear.physics.settle).
        `body`: the robot's Robot Body Model fields, which hold its start."""
        orientation = np.asarray(body.rotation, dtype=float)
        if body.start_mode == "relative":
            east, north = body.start_east, body.start_north
            ground = self.terrain_height(east, north)
            z = (ground + body.start_altitude if body.drop_start else ground) + clearance
        else:
            east, north, up = geodetic_to_enu(body.start_latitude, body.start_longitude, body.start_abs_altitude,
                                              *self.geodetic_origin)
            ground = self.terrain_height(east, north)
            z = (max(up, ground + 0.01) if body.drop_start else ground) + clearance
        self.page_terrain((east, north))
        return np.array([east, north, z]), orientation / np.linalg.norm(orientation)

    def reset_vehicle(self, index: int | None = None) -> None:
        """Put robot `index` (None: every robot) back at its start pose, at rest, inputs released (its
        gripper open and down)."""
        for i in range(len(self.vehicles)) if index is None else (index,):
            position, orientation = self.start_poses[i]
            self.vehicles[i].reset(tuple(position), tuple(orientation))
            if i in self.grippers:
                self.grippers[i].reset()

    def robot_body_ids(self, index: int) -> list[int]:
        """Bodies that make up robot `index` (its own sensors' rays must ignore them)."""
        gripper = self.grippers.get(index)
        return [self.vehicles[index].body_id] + ([gripper.body_id] if gripper is not None else [])

    # --- stepping ----------------------------------------------------------------------------------

    def step(self) -> bool:
        """Advance one fixed physics step: every vehicle's and gripper's forces (the mesh vehicles' wheel
        rays cast in one batch), then pybullet. True when a robot fell off the terrain's edge on this step
        and is back at its start pose (its fall is added to `falls`, its index to `fell`)."""
        if self.pager is not None:
            self.page_terrain()
        mesh_vehicles = self._mesh_vehicles
        batch = self._wheel_batch
        if batch is None and len(mesh_vehicles) > 1:
            kernels = tyre.batch_kernels()  # once the vehicles' first update has chosen compiled kernels
            if kernels is not None:
                batch = self._wheel_batch = WheelBatch(mesh_vehicles, kernels)
        if batch is not None:  # every mesh vehicle's rays in one batch, their kernels in one call
            batch.step(self.dt)
            for other in self.vehicles:
                if not isinstance(other, Vehicle):
                    other.update(self.dt)
        elif len(mesh_vehicles) > 1:  # every mesh vehicle's wheel rays in one batch
            starts: list[Any] = []
            ends: list[Any] = []
            for mesh in mesh_vehicles:
                s, e = mesh.wheel_rays(self.dt)
                starts.extend(s)
                ends.extend(e)
            hits = p.rayTestBatch(starts, ends, collisionFilterMask=WHEEL_RAY_MASK, physicsClientId=self.client)
            for index, mesh in enumerate(mesh_vehicles):
                mesh.apply_wheel_hits(hits[4 * index:4 * index + 4])
            for other in self.vehicles:
                if not isinstance(other, Vehicle):
                    other.update(self.dt)
        else:
            for any_vehicle in self.vehicles:
                any_vehicle.update(self.dt)
        for gripper in self.grippers.values():
            gripper.update(self.dt)
        p.stepSimulation(physicsClientId=self.client)
        self.time += self.dt
        if self.fell:
            self.fell = []
        for index, vehicle in enumerate(self.vehicles):
            (x, y, z), _ = p.getBasePositionAndOrientation(vehicle.body_id, physicsClientId=self.client)
            if z >= self.fall_height:
                continue
            (x0, y0, _), (x1, y1, _) = self.terrain.bounds
            self.falls.append((self.time, min(max(x, x0), x1), min(max(y, y0), y1)))
            self.fell.append(index)
            self.reset_vehicle(index)
        return bool(self.fell)

    # --- queries -----------------------------------------------------------------------------------

    def terrain_height(self, x: float, y: float) -> float:
        """Terrain height (m) at world point (x, y); 0 outside the terrain."""
        return float(self.terrain_heights(np.array([[x, y]]))[0])

    def page_terrain(self, *also: tuple[float, float]) -> None:
        """Bring the paged terrain's collision tiles up to date around the moving bodies (robots, movable
        obstacles) and the points `also` (x, y m; a robot about to be placed there). Nothing for a terrain
        that is not paged."""
        pager = self.pager
        if pager is None:
            return
        bodies = [v.body_id for v in self.vehicles] + [o.body_id for o in self.obstacles if o.dynamic]
        points = [p.getBasePositionAndOrientation(b, physicsClientId=self.client)[0][:2] for b in bodies]
        points += [(float(x), float(y)) for x, y in also]
        if pager.update(np.array(points, dtype=np.float64).reshape(-1, 2), force=bool(also)):
            self.terrain_ids[1:] = pager.bodies
            self.static_world.grid_bodies = set(self.terrain_ids)

    def terrain_heights(self, xy: np.ndarray) -> np.ndarray:
        """Terrain heights (m) at world points (N, 2); 0 where there is no terrain."""
        if self.pager is not None:
            return self.pager.grid.heights_at(np.asarray(xy, dtype=np.float64).reshape(-1, 2))
        lo, hi = self.terrain.bounds[:, 2]
        top, bottom = hi + 10.0, lo - 10.0
        starts = np.column_stack([xy, np.full(len(xy), top)])
        ends = np.column_stack([xy, np.full(len(xy), bottom)])
        hits = p.rayTestBatch(starts.tolist(), ends.tolist(), collisionFilterMask=TERRAIN_COLLISION_GROUP,
                              physicsClientId=self.client)
        return np.array([h[3][2] if h[0] >= 0 else 0.0 for h in hits])

    # --- obstacles -----------------------------------------------------------------------------------

    def _static_body(self, shape: int, position, orientation=(0, 0, 0, 1), surface: trimesh.Trimesh | None = None,
                     hull: bool = False) -> int:
        """A fixed body in the static collision group (it never collides with other fixed bodies), its
        `surface` (body frame) given to the static world for the ray caster; `hull`: the shape is a convex
        hull (GEOM_MESH), whose collision margin Bullet puts outside the surface (a box's or a cylinder's
        it keeps inside).

        A plain Bullet rigid body (maximal coordinates), not a one-link multibody: Bullet files a static
        rigid body as static, so a step neither updates its bounding box nor looks for its pairs, where a
        fixed multibody costs both on every step (1,000 fixed boxes: 1.8 ms against 0.2 ms a step)."""
        body = p.createMultiBody(0, shape, basePosition=position, baseOrientation=orientation,
                                 useMaximalCoordinates=True, physicsClientId=self.client)
        p.setCollisionFilterGroupMask(body, -1, STATIC_COLLISION_GROUP, STATIC_COLLISION_MASK,
                                      physicsClientId=self.client)
        if surface is not None:
            rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
            vertices = np.asarray(surface.vertices) @ rotation.T + np.asarray(position, dtype=float)
            margin = p.getDynamicsInfo(body, -1, physicsClientId=self.client)[11] if hull else 0.0
            self.static_world.add_obstacle(StaticShape(body, vertices, np.asarray(surface.faces), margin))
        return body

    def add_tree(self, x: float, y: float, z: float | None = None) -> int:
        """A static tree whose trunk axis stands at (x, y), its foot at height `z` (m).

        Trunk: a cylinder 0.3 m wide from the foot to 2 m above it. Crown: a cone 2.4 m wide at its
        base, 1.5 m above the foot, its tip 4.5 m above the foot. z None puts the foot at the lowest
        ground under the trunk, so on a slope the trunk never floats (its uphill edge sinks in by
        0.3 m × the slope). Returns its index in `obstacles`."""
        if z is None:
            around = [(x + TRUNK_RADIUS * math.cos(a), y + TRUNK_RADIUS * math.sin(a))
                      for a in np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)]
            base = float(self.terrain_heights(np.array([(x, y), *around])).min())
        else:
            base = float(z)
        import trimesh

        mesh = make_tree()
        trunk = p.createCollisionShape(p.GEOM_CYLINDER, radius=TRUNK_RADIUS, height=2.0,
                                       physicsClientId=self.client)
        crown_mesh = trimesh.creation.cone(radius=1.2, height=3.0, sections=24)
        crown = p.createCollisionShape(p.GEOM_MESH, vertices=crown_mesh.vertices.tolist(),
                                       physicsClientId=self.client)
        # pybullet makes the crown the convex hull of the cone's vertices: the same hull here.
        ids = [self._static_body(trunk, (x, y, base + 1.0),
                                 surface=trimesh.creation.cylinder(TRUNK_RADIUS, 2.0, sections=TRUNK_SECTIONS)),
               self._static_body(crown, (x, y, base + 1.5), surface=crown_mesh.convex_hull, hull=True)]
        self._keep(Obstacle("tree", ids, mesh, size=(2.4, 2.4, 4.5), colour=(0.2, 0.55, 0.2, 1.0)))
        # The trunk body's frame is 1 m up its axis; draw the tree mesh from the ground point.
        self._draw_offsets[ids[0]] = np.array([0.0, 0.0, -1.0])
        return len(self.obstacles) - 1

    def add_box(self, x: float, y: float, z: float | None = None, size: float = 1.0, mass: float = 1.0,
                yaw: float = 0.0) -> int:
        """A cube of edge `size` m and `mass` kg, its edges along x and y turned by `yaw` rad about z,
        centred on (x, y, z) m: `z` is the cube's centre, not its bottom.

        z None rests its bottom on the highest ground under it (sampled at its corners, edge middles
        and centre), so it never starts inside the terrain; on a slope it then touches the ground at the
        uphill edge only, and a movable one settles. mass 0 makes it immovable (and it stays where it is
        put, even in the air); a movable box falls under gravity. Heavy boxes make solid walls. Returns
        its index in `obstacles`."""
        if not (size > 0 and math.isfinite(size)):
            raise ValueError(f"add_box: size must be a number greater than 0 metres, not {size!r}")
        if not (mass >= 0 and math.isfinite(mass)):
            raise ValueError(f"add_box: mass must be 0 (immovable) or more kilograms, not {mass!r}")
        half = size / 2.0
        if z is None:
            corners = _turned(np.array([[dx, dy] for dx in (-half, 0, half) for dy in (-half, 0, half)]), x, y, yaw)
            z = float(self.terrain_heights(corners).max()) + half
        import trimesh

        mesh = trimesh.creation.box(extents=(size, size, size))
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[half] * 3, physicsClientId=self.client)
        orn = p.getQuaternionFromEuler((0, 0, yaw))
        if mass > 0:
            body = p.createMultiBody(mass, shape, basePosition=(x, y, z), baseOrientation=orn,
                                     physicsClientId=self.client)
            # A box at rest sleeps (Bullet stops integrating it) until something touches it.
            p.changeDynamics(body, -1, lateralFriction=0.6, activationState=p.ACTIVATION_STATE_ENABLE_SLEEPING,
                             physicsClientId=self.client)
        else:
            body = self._static_body(shape, (x, y, z), orn, surface=mesh)
            p.changeDynamics(body, -1, lateralFriction=0.6, physicsClientId=self.client)
        self._keep(Obstacle("box", [body], mesh, dynamic=mass > 0, size=(size, size, size),
                                       colour=(0.65, 0.45, 0.25, 1.0)))
        return len(self.obstacles) - 1

    def add_wall(self, x1: float, y1: float, x2: float, y2: float, height: float = 1.0,
                 thickness: float = 0.2, mass: float = 0.0) -> int:
        """A wall (static; movable when `mass` kg > 0), a box `height` m tall and `thickness` m thick
        whose centre line runs from (x1, y1) to (x2, y2) m, extended past each end point by half the
        thickness: walls that share an end point close the corner, and a wall is length + thickness long.

        Its bottom is level, at the lowest ground under its footprint (sampled every 0.5 m or closer
        along both faces and the centre line, end caps included), and its top `height` above that: on
        level ground it stands `height` tall; on a slope it never floats, and its uphill part sinks
        into the ground (a long wall up a hill can disappear: build it from shorter pieces); a movable
        one then settles. Returns its index in `obstacles`."""
        if not (height > 0 and thickness > 0):
            raise ValueError("add_wall: height and thickness must be greater than 0 metres")
        length = math.hypot(x2 - x1, y2 - y1)
        if length <= 0:
            raise ValueError("add_wall: the two end points are the same; give a wall some length")
        along = np.array([x2 - x1, y2 - y1]) / length * (thickness / 2.0)
        across = np.array([-along[1], along[0]])
        start, end = np.array([x1, y1]) - along, np.array([x2, y2]) + along
        count = max(2, math.ceil((length + thickness) / 0.5) + 1)
        sides = (-across, np.zeros(2), across)  # both faces and the centre line
        samples = np.concatenate([np.linspace(start + side, end + side, count) for side in sides])
        base = float(self.terrain_heights(samples).min())
        full = (length + thickness, thickness, height)
        yaw = math.atan2(y2 - y1, x2 - x1)
        orn = p.getQuaternionFromEuler((0, 0, yaw))
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[v / 2 for v in full], physicsClientId=self.client)
        import trimesh

        mesh = trimesh.creation.box(extents=full)
        centre = ((x1 + x2) / 2, (y1 + y2) / 2, base + height / 2)
        if mass > 0:
            body = p.createMultiBody(mass, shape, basePosition=centre, baseOrientation=orn,
                                     physicsClientId=self.client)
            p.changeDynamics(body, -1, lateralFriction=0.6, activationState=p.ACTIVATION_STATE_ENABLE_SLEEPING,
                             physicsClientId=self.client)
        else:
            body = self._static_body(shape, centre, orn, surface=mesh)
        self._keep(Obstacle("wall", [body], mesh, dynamic=mass > 0, size=full,
                                       colour=(0.75, 0.72, 0.68, 1.0)))
        return len(self.obstacles) - 1

    def add_table(self, x: float, y: float, width: float, depth: float, height: float, yaw: float = 0.0,
                  mass: float = 0.0) -> int:
        """A table centred on (x, y) m: a top `width` m along its x (turned `yaw` rad from east) and `depth`
        m across, its upper face `height` m above its feet, on four square legs flush with its corners;
        fixed, or movable as one body of `mass` kg when mass > 0.

        The top is TABLE_TOP m thick and the legs TABLE_LEG m square (both at most a quarter of the
        table's size, so a small table stays a table; sear.scene.table_parts). The feet stand on the lowest
        ground under the four legs: on level ground the underside of the top is height - TABLE_TOP above
        it, and a robot lower than that drives under; on a slope the uphill legs sink in. A fixed table's
        every part is a fixed body in the static collision group, so the sensors' rays see legs and top.
        Returns its index in `obstacles` (`kind` 'table'; the drawing mesh is in the top's frame)."""
        if not all(v > 0 and math.isfinite(v) for v in (width, depth, height)):
            raise ValueError("add_table: width, depth and height must be numbers greater than 0 metres")
        if not (mass >= 0 and math.isfinite(mass)):
            raise ValueError(f"add_table: mass must be 0 (fixed) or more kilograms, not {mass!r}")
        return self._add_parts("table", table_parts(width, depth, height), x, y, yaw, mass,
                               size=(width, depth, height), colour=(0.55, 0.38, 0.22, 1.0))

    def add_shelf(self, x: float, y: float, width: float, depth: float, height: float, levels: int = 5,
                  yaw: float = 0.0, mass: float = 0.0) -> int:
        """A shelf centred on (x, y) m: two side panels `width` m apart (outer faces) along its x, turned
        `yaw` rad from east, `depth` m deep and `height` m tall, with `levels` boards between them, the
        lowest on the ground and the highest flush with the top (sear.scene.shelf_parts: panels and boards
        SHELF_PANEL thick); open at front and back. Its feet stand on the lowest ground under it, as a
        table's; fixed, or movable as one body of `mass` kg when mass > 0. Returns its index in
        `obstacles` (the drawing mesh is in its first side panel's frame)."""
        if not all(v > 0 and math.isfinite(v) for v in (width, depth, height)):
            raise ValueError("add_shelf: width, depth and height must be numbers greater than 0 metres")
        if levels != int(levels) or not 2 <= levels <= MAX_SHELF_LEVELS:
            raise ValueError(f"add_shelf: levels must be a whole number of boards from 2 to {MAX_SHELF_LEVELS}, "
                             f"not {levels!r}")
        if not (mass >= 0 and math.isfinite(mass)):
            raise ValueError(f"add_shelf: mass must be 0 (fixed) or more kilograms, not {mass!r}")
        return self._add_parts("shelf", shelf_parts(width, depth, height, int(levels)), x, y, yaw, mass,
                               size=(width, depth, height), colour=(0.62, 0.5, 0.36, 1.0))

    def _add_parts(self, kind: str, parts: list[tuple[tuple[float, float, float], tuple[float, float, float]]],
                   x: float, y: float, yaw: float, mass: float, size: tuple[float, float, float],
                   colour: tuple[float, float, float, float]) -> int:
        """An obstacle made of boxes (`parts`: centre and size in its frame, feet at z = 0) standing at
        (x, y) turned `yaw`, its feet on the lowest ground under the parts that touch the ground (sampled
        at their corners and every 0.5 m or closer). mass 0: each part a fixed body of the static group
        (the drawing mesh in the first part's frame); else one movable body of `mass` kg, a compound of
        the boxes about their common centre of volume (the drawing mesh in that frame)."""
        import trimesh

        samples: list[tuple[float, float]] = []
        for (cx, cy, cz), (sx, sy, sz) in parts:
            if cz - sz / 2.0 > 1e-9:
                continue
            xs = np.linspace(cx - sx / 2, cx + sx / 2, max(2, math.ceil(sx / 0.5) + 1))
            ys = np.linspace(cy - sy / 2, cy + sy / 2, max(2, math.ceil(sy / 0.5) + 1))
            samples.extend((u, v) for u in xs for v in ys)
        base = float(self.terrain_heights(_turned(np.array(samples), x, y, yaw)).min())
        orn = p.getQuaternionFromEuler((0, 0, yaw))
        rotation = np.asarray(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
        origin = np.array([x, y, base])
        centres = np.array([c for c, _ in parts], dtype=float)
        meshes = [trimesh.creation.box(extents=dims) for _, dims in parts]
        if mass > 0:
            volumes = np.array([d[0] * d[1] * d[2] for _, d in parts])
            frame = (centres * volumes[:, None]).sum(axis=0) / volumes.sum()
            shape = p.createCollisionShapeArray([p.GEOM_BOX] * len(parts),
                                                halfExtents=[[v / 2 for v in d] for _, d in parts],
                                                collisionFramePositions=(centres - frame).tolist(),
                                                physicsClientId=self.client)
            body = p.createMultiBody(mass, shape, basePosition=(origin + rotation @ frame).tolist(),
                                     baseOrientation=orn, physicsClientId=self.client)
            p.changeDynamics(body, -1, lateralFriction=0.6, activationState=p.ACTIVATION_STATE_ENABLE_SLEEPING,
                             physicsClientId=self.client)
            ids = [body]
        else:
            frame = centres[0]
            ids = []
            for centre, (_, dims), mesh in zip(centres, parts, meshes, strict=True):
                part_shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[v / 2 for v in dims],
                                                    physicsClientId=self.client)
                ids.append(self._static_body(part_shape, (origin + rotation @ centre).tolist(), orn, surface=mesh))
                p.changeDynamics(ids[-1], -1, lateralFriction=0.6, physicsClientId=self.client)
        drawn = [m.copy().apply_translation(c - frame) for m, c in zip(meshes, centres, strict=True)]
        offsets = np.cumsum([0] + [len(m.vertices) for m in drawn[:-1]])
        mesh = trimesh.Trimesh(np.concatenate([m.vertices for m in drawn]),
                               np.concatenate([m.faces + o for m, o in zip(drawn, offsets, strict=True)]),
                               process=False)
        self._keep(Obstacle(kind, ids, mesh, dynamic=mass > 0, size=size, colour=colour))
        return len(self.obstacles) - 1

    def _keep(self, obstacle: Obstacle) -> None:
        """Add `obstacle` to `obstacles`, its bodies coloured for the cameras as the window draws them."""
        self.obstacles.append(obstacle)
        for body in obstacle.body_ids:
            self.static_world.set_colour(body, obstacle.colour)

    def build_scene(self, scene: Scene) -> None:
        """Every obstacle of a project's <world>, each built by the call user code's sim.add_* makes (same
        geometry, same rules for standing on the terrain), named in `obstacles` as in the file."""
        for item in scene.obstacles():
            if isinstance(item, Box):
                index = self.add_box(item.x, item.y, item.z, size=item.size, mass=item.body_mass, yaw=item.yaw)
            elif isinstance(item, Wall):
                (x1, y1), (x2, y2) = item.ends()
                index = self.add_wall(x1, y1, x2, y2, height=item.height, thickness=item.thickness,
                                      mass=item.body_mass)
            elif isinstance(item, Table):
                index = self.add_table(item.x, item.y, item.width, item.depth, item.height, yaw=item.yaw,
                                       mass=item.body_mass)
            elif isinstance(item, Shelf):
                index = self.add_shelf(item.x, item.y, item.width, item.depth, item.height, item.levels,
                                       yaw=item.yaw, mass=item.body_mass)
            elif isinstance(item, Tree):
                index = self.add_tree(item.x, item.y)
            else:
                raise TypeError(f"not an obstacle: {item!r}")
            self.obstacles[index].name = item.name

    def obstacle_pose(self, obstacle: Obstacle) -> tuple[np.ndarray, np.ndarray]:
        """World position and orientation of an obstacle's drawing mesh."""
        pos, orn = p.getBasePositionAndOrientation(obstacle.body_id, physicsClientId=self.client)
        offset = self._draw_offsets.get(obstacle.body_id)
        pos = np.asarray(pos) if offset is None else np.asarray(pos) + offset
        return pos, np.asarray(orn)

    def close(self) -> None:
        """Disconnect the pybullet client if this world created it."""
        if self._own_client and self.client is not None and p.isConnected(self.client):
            p.disconnect(self.client)


def _turned(points: np.ndarray, x: float, y: float, yaw: float) -> np.ndarray:
    """Points (N, 2) of an obstacle's own frame in the world: turned `yaw` rad about z, moved to (x, y) m."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.column_stack([x + c * points[:, 0] - s * points[:, 1], y + s * points[:, 0] + c * points[:, 1]])
