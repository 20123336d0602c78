"""The pure model of a robot description (URDF): links, joints and their shapes, and the frames they
make at the zero pose (no pybullet, no Qt).

    desc.root                       # the base link's name
    desc.links["base_link"].inertial.mass
    desc.joints["front_left_wheel"].axis
    desc.link_poses()               # 4x4 transform of every link frame in the root frame, zero pose
    desc.lowest_point()             # how far the root frame stands above the ground at rest, m

Frames and units are the URDF's: metres, radians, kilograms; x forward, y left, z up in the root link's
frame. sear.models.robotdesc.parse reads a file into this model; a mesh shape is read through sear.models.meshfiles when
it is asked for.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import numpy as np

from sear.errors import ProjectError
from sear.models.meshfiles import load_mesh

if TYPE_CHECKING:
    import trimesh

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
"""The joint types URDF defines."""
MOVING_JOINT_TYPES = ("revolute", "continuous", "prismatic", "floating", "planar")
CYLINDER_SECTIONS = 32
"""Sides of the prism that stands for a cylinder in the overlap test: its faces lie at most
r·(1 - cos(180°/32)) = 0.5 % of the radius inside the cylinder."""

@dataclass(frozen=True)
class Origin:
    """A URDF <origin>: translation (m) and roll, pitch, yaw (rad, fixed axes x, y, z)."""

    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def matrix(self) -> np.ndarray:
        """The 4x4 homogeneous transform child frame -> parent frame."""
        out = np.eye(4)
        out[:3, :3] = rpy_matrix(*self.rpy)
        out[:3, 3] = self.xyz
        return out


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's rotation: R = Rz(yaw) · Ry(pitch) · Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


@functools.lru_cache(maxsize=1024)
def _primitive(kind: str, size: tuple[float, float, float], radius: float,
               length: float) -> tuple[np.ndarray, np.ndarray]:
    """The vertices and faces of a primitive shape, made by trimesh once per shape and size: making a box
    anew took ~1 ms, a third of the cost of checking a link, and robots repeat their shapes."""
    import trimesh as tm

    if kind == "box":
        mesh = tm.creation.box(extents=size)
    elif kind == "cylinder":
        mesh = tm.creation.cylinder(radius=radius, height=length, sections=CYLINDER_SECTIONS)
    else:
        mesh = tm.creation.icosphere(subdivisions=2, radius=radius)
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces)


@dataclass(frozen=True)
class Geometry:
    """One <visual> or <collision> shape of a link, in the link's frame (through `origin`)."""

    kind: Literal["box", "cylinder", "sphere", "mesh"]
    origin: Origin
    line: int
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Box edge lengths, m."""
    radius: float = 0.0
    """Cylinder or sphere radius, m."""
    length: float = 0.0
    """Cylinder length along its z axis, m."""
    filename: str = ""
    """Mesh path as the URDF writes it."""
    mesh: Path | None = None
    """Mesh file found for `filename` (None: not found; see RobotDescription.missing_meshes)."""
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    """Mesh scale per axis."""

    def shape(self) -> trimesh.Trimesh:
        """The shape as a triangle mesh in the link frame, m (a cylinder as a CYLINDER_SECTIONS prism).
        Raises ProjectError for a mesh file that is missing or cannot be read."""
        import trimesh as tm

        if self.kind in ("box", "cylinder", "sphere"):
            vertices, faces = _primitive(self.kind, self.size, self.radius, self.length)
            shape = tm.Trimesh(vertices=vertices.copy(), faces=faces.copy(), process=False)
        else:
            if self.mesh is None:
                raise ProjectError(f"the mesh '{self.filename}' was not found.", line=self.line)
            shape = load_mesh(self.mesh, tab="Robot Body Model")
            shape.apply_scale(self.scale)  # a matrix: per-axis scale
        shape.apply_transform(self.origin.matrix())
        return shape


@dataclass(frozen=True)
class Inertial:
    """A link's <inertial>: mass (kg), centre of mass frame and inertia about it (kg·m²)."""

    mass: float
    origin: Origin
    inertia: tuple[float, float, float, float, float, float]
    """ixx, ixy, ixz, iyy, iyz, izz."""
    line: int

    def matrix(self) -> np.ndarray:
        ixx, ixy, ixz, iyy, iyz, izz = self.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


@dataclass(frozen=True)
class Link:
    name: str
    line: int
    inertial: Inertial | None = None
    visuals: tuple[Geometry, ...] = ()
    collisions: tuple[Geometry, ...] = ()


@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    line: int
    origin: Origin = Origin()
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    """Unit axis in the joint (child) frame."""
    lower: float | None = None
    """Lower limit, rad or m (None: none given)."""
    upper: float | None = None
    effort: float | None = None
    """Largest force/torque, N or N·m (None: none given)."""
    velocity: float | None = None
    """Largest speed, rad/s or m/s (None: none given)."""

    @property
    def moves(self) -> bool:
        return self.type in MOVING_JOINT_TYPES


@dataclass
class RobotDescription:
    """A URDF as read: its links and joints by name (file order), the tree's root and where meshes were
    looked for."""

    path: Path
    name: str
    links: dict[str, Link]
    joints: dict[str, Joint]
    root: str
    package_roots: tuple[Path, ...] = ()
    resolved: bytes = b""
    """The file's text for pybullet's loader, which knows neither package roots nor `$(optenv)`: every mesh
    path replaced by the file SEAR found, ROS substitutions expanded (sear.models.robotdesc.parse makes it as it
    reads the file, so the file is read once)."""

    def _tree(self) -> tuple[dict[str, Joint], dict[str, list[Joint]]]:
        """Each link's parent joint and child joints (file order), indexed once: looking them up by scanning
        every joint made the checks of a robot of n links cost n² (n³ for its pairs of links), minutes
        for a few hundred links. Indexed again when the joints change (they are set when the file is read)."""
        key = (id(self.joints), len(self.joints))
        cached = self.__dict__.get("_tree_cache")
        if cached is None or cached[0] != key:
            parents: dict[str, Joint] = {}
            children: dict[str, list[Joint]] = {}
            for joint in self.joints.values():
                parents.setdefault(joint.child, joint)
                children.setdefault(joint.parent, []).append(joint)
            cached = (key, parents, children)
            self.__dict__["_tree_cache"] = cached
        return cached[1], cached[2]

    def parent_joint(self, link: str) -> Joint | None:
        """The joint whose child is `link` (None for the root)."""
        return self._tree()[0].get(link)

    def child_joints(self, link: str) -> list[Joint]:
        """The joints whose parent is `link`, in file order."""
        return list(self._tree()[1].get(link, ()))

    def subtree(self, link: str) -> list[str]:
        """`link` and every link below it."""
        children = self._tree()[1]
        out: list[str] = []
        todo = [link]
        while todo and len(out) <= len(self.links):  # a loop (never in a file read) ends
            name = todo.pop()
            out.append(name)
            todo += [j.child for j in children.get(name, ())]
        return out

    def chain(self, link: str) -> list[Joint]:
        """The joints from the root down to `link`, root first."""
        joints: list[Joint] = []
        joint = self.parent_joint(link)
        while joint is not None and len(joints) <= len(self.joints):  # a loop (never in a file read) ends
            joints.append(joint)
            joint = self.parent_joint(joint.parent)
        return joints[::-1]

    def link_poses(self) -> dict[str, np.ndarray]:
        """4x4 transform of every link frame into the root link's frame at the zero pose (every joint
        at 0), m."""
        children = self._tree()[1]
        poses = {self.root: np.eye(4)}
        todo = [self.root]
        while todo:
            parent = todo.pop()
            for joint in children.get(parent, ()):
                poses[joint.child] = poses[parent] @ joint.origin.matrix()
                todo.append(joint.child)
        return poses

    def visual_mesh(self, links: Iterable[str], frame: str | None = None) -> trimesh.Trimesh:
        """The visual shapes (collision shapes for a link without visuals) of `links` as one mesh at the
        zero pose, in the root link's frame, or in link `frame`'s when given; for drawing. A tiny box
        when they have no shapes. Raises ProjectError for a mesh that cannot be read."""
        import trimesh as tm

        poses = self.link_poses()
        to_frame = np.linalg.inv(poses[frame]) if frame is not None else np.eye(4)
        meshes: list[trimesh.Trimesh] = []
        for name in links:
            link = self.links[name]
            for geometry in link.visuals or link.collisions:
                shape = geometry.shape()
                shape.apply_transform(to_frame @ poses[name])
                meshes.append(shape)
        if not meshes:
            return tm.creation.box(extents=(0.01, 0.01, 0.01))
        return cast("trimesh.Trimesh", tm.util.concatenate(meshes))

    def missing_meshes(self) -> list[tuple[Link, Geometry]]:
        """Every visual or collision mesh whose file was not found, with its link."""
        return [(link, g) for link in self.links.values() for g in (*link.visuals, *link.collisions)
                if g.kind == "mesh" and g.mesh is None]

    def adjacent(self, a: str, b: str) -> bool:
        """Whether links a and b are parent and child of one joint."""
        parents = self._tree()[0]
        return any(joint is not None and joint.parent == other
                   for joint, other in ((parents.get(a), b), (parents.get(b), a)))

    def collision_mesh(self, link: str, poses: dict[str, np.ndarray] | None = None) -> trimesh.Trimesh | None:
        """The link's collision shapes as one mesh in the root frame at the zero pose (None: it has none)."""
        import trimesh as tm

        geometries = self.links[link].collisions
        if not geometries:
            return None
        pose = (poses or self.link_poses())[link]
        meshes: list[trimesh.Trimesh] = [g.shape() for g in geometries]
        mesh = meshes[0] if len(meshes) == 1 else cast("trimesh.Trimesh", tm.util.concatenate(meshes))
        mesh.apply_transform(pose)
        return mesh

    def lowest_point(self) -> float:
        """z (m, root frame, zero pose) of the lowest point of all collision shapes (0 without any): how far
        the root frame lies above the ground when the robot stands at rest. A mesh that cannot be read is
        left out (the collision report names it)."""
        poses = self.link_poses()
        lows = []
        for name in self.links:
            try:
                mesh = self.collision_mesh(name, poses)
            except ProjectError:
                continue
            if mesh is not None:
                lows.append(float(mesh.bounds[0][2]))
        return min(lows) if lows else 0.0
