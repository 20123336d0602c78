"""Robot descriptions from URDF files, as pure data: links, joints, their zero pose, wheels and a
collision report (no pybullet, no Qt).

Why a reader of our own on lxml rather than a URDF library: every message about a bad file must name its
line (lxml keeps line numbers; yourdfpy and urdfpy drop them), and a URDF is a small format. The
simulation loads the same file with pybullet's own loader (sear.physics.urdf), after `resolved_urdf`
has made every mesh path absolute, so both read the same meshes.

    desc = load_urdf(path, package_roots=[Path("~/ros/src")])   # ProjectError for bad input
    desc.root                       # the base link's name
    desc.links["base_link"].inertial.mass
    desc.joints["front_left_wheel"].axis
    desc.link_poses()               # 4x4 transform of every link frame in the root frame, zero pose
    propose_wheels(desc)            # WheelProposal: left/right wheel joints, steering joints
    collision_report(desc)          # [Finding]: overlapping links, bad inertia/mass, open meshes

Frames and units are the URDF's: metres, radians, kilograms; x forward, y left, z up in the root link's
frame. Mesh paths `package://PKG/REST` are looked up as ROOT/PKG/REST and ROOT/REST for each package
root, then in the folders above the URDF (a ROS package keeps its URDF in PKG/urdf/); relative paths
are relative to the URDF's folder; `file://` paths are absolute.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
from lxml import etree

from sear.errors import ProjectError

if TYPE_CHECKING:
    import trimesh

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
"""The joint types URDF defines."""
MOVING_JOINT_TYPES = ("revolute", "continuous", "prismatic", "floating", "planar")
MAX_LINK_MASS = 1000.0
"""kg: a link heavier than this is reported as suspicious (a mass in grams, or a typo)."""
OVERLAP_TOLERANCE = 0.001
"""m: collision shapes that overlap by less than about this much are taken as touching, not overlapping
(CAD exports put parts face to face)."""
CYLINDER_SECTIONS = 32
"""Sides of the prism that stands for a cylinder in the overlap test: its faces lie at most
r·(1 - cos(180°/32)) = 0.5 % of the radius inside the cylinder."""


def _fail(message: str, path: Path, line: int | None = None, element: str | None = None) -> ProjectError:
    return ProjectError(message, file=path, line=line, field=element)


# --- the data ------------------------------------------------------------------------------------

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

        if self.kind == "box":
            shape = tm.creation.box(extents=self.size)
        elif self.kind == "cylinder":
            shape = tm.creation.cylinder(radius=self.radius, height=self.length, sections=CYLINDER_SECTIONS)
        elif self.kind == "sphere":
            shape = tm.creation.icosphere(subdivisions=2, radius=self.radius)
        else:
            if self.mesh is None:
                raise ProjectError(f"the mesh '{self.filename}' was not found.", line=self.line)
            from sear.meshio import load_mesh

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

    def parent_joint(self, link: str) -> Joint | None:
        """The joint whose child is `link` (None for the root)."""
        for joint in self.joints.values():
            if joint.child == link:
                return joint
        return None

    def child_joints(self, link: str) -> list[Joint]:
        """The joints whose parent is `link`, in file order."""
        return [j for j in self.joints.values() if j.parent == link]

    def subtree(self, link: str) -> list[str]:
        """`link` and every link below it."""
        out, todo = [], [link]
        while todo:
            name = todo.pop()
            out.append(name)
            todo += [j.child for j in self.child_joints(name)]
        return out

    def chain(self, link: str) -> list[Joint]:
        """The joints from the root down to `link`, root first."""
        joints = []
        joint = self.parent_joint(link)
        while joint is not None:
            joints.append(joint)
            joint = self.parent_joint(joint.parent)
        return joints[::-1]

    def fixed_to_root(self, link: str) -> bool:
        """Whether only fixed joints lie between the root and `link` (it moves with the base)."""
        return all(not j.moves for j in self.chain(link))

    def link_poses(self) -> dict[str, np.ndarray]:
        """4x4 transform of every link frame into the root link's frame at the zero pose (every joint
        at 0), m."""
        poses = {self.root: np.eye(4)}
        todo = [self.root]
        while todo:
            parent = todo.pop()
            for joint in self.child_joints(parent):
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
        return any({j.parent, j.child} == {a, b} for j in self.joints.values())

    def collision_mesh(self, link: str, poses: dict[str, np.ndarray] | None = None) -> trimesh.Trimesh | None:
        """The link's collision shapes as one mesh in the root frame at the zero pose (None: it has none)."""
        import trimesh as tm

        geometries = self.links[link].collisions
        if not geometries:
            return None
        pose = (poses or self.link_poses())[link]
        meshes: list[trimesh.Trimesh] = [g.shape() for g in geometries]
        mesh = cast("trimesh.Trimesh", tm.util.concatenate(meshes))
        mesh.apply_transform(pose)
        return mesh


# --- reading -------------------------------------------------------------------------------------

_SUBSTITUTION = re.compile(r"\$\((optenv|env)\s+(\w+)\s*([^)]*)\)")


def _expand(text: str) -> str:
    """ROS launch substitutions some URDFs keep, `$(optenv NAME default)` and `$(env NAME)`: the
    environment's value, else the default (the Husky's `$(optenv HUSKY_IMU_XYZ 0.19 0 0.149)`)."""
    return _SUBSTITUTION.sub(lambda m: os.environ.get(m.group(2), m.group(3).strip()), text)


def _numbers(el: etree._Element, attr: str, count: int, default: tuple[float, ...] | None, path: Path,
             what: str) -> tuple[float, ...]:
    text = el.get(attr)
    if text is None:
        if default is None:
            raise _fail(f"<{el.tag}> needs the attribute {attr}=\"...\" ({count} number{'s' if count > 1 else ''}).",
                        path, el.sourceline, what)
        return default
    parts = _expand(text).split()
    try:
        values = tuple(float(v) for v in parts)
    except ValueError:
        values = ()
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise _fail(f"<{el.tag} {attr}=\"{text}\"> must be {count} finite number{'s' if count > 1 else ''}.",
                    path, el.sourceline, what)
    return values


def _number(el: etree._Element, attr: str, path: Path, what: str, default: float | None = None) -> float | None:
    if el.get(attr) is None and default is None:
        return None
    return _numbers(el, attr, 1, None if default is None else (default,), path, what)[0]


def _origin(parent: etree._Element, path: Path, what: str) -> Origin:
    el = parent.find("origin")
    if el is None:
        return Origin()
    xyz = _numbers(el, "xyz", 3, (0.0, 0.0, 0.0), path, what)
    rpy = _numbers(el, "rpy", 3, (0.0, 0.0, 0.0), path, what)
    return Origin((xyz[0], xyz[1], xyz[2]), (rpy[0], rpy[1], rpy[2]))


def resolve_mesh(filename: str, urdf: Path, package_roots: tuple[Path, ...] | list[Path] = ()) -> tuple[Path | None,
                                                                                                     list[Path]]:
    """The file a URDF mesh path names, and every place looked at (for the message when none exists).

    `package://PKG/REST`: ROOT/PKG/REST, then ROOT/REST for each package root, then each folder above
    the URDF named PKG (ROS keeps PKG/urdf/robot.urdf), then the URDF's folder / REST (pybullet's own
    rule). `file://ABS` is absolute; anything else is relative to the URDF's folder."""
    folder = urdf.absolute().parent
    candidates: list[Path] = []
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        package, _, inner = rest.partition("/")
        for root in package_roots:
            root = Path(root).expanduser()
            candidates += [root / package / inner, root / inner]
        candidates += [above / inner for above in [folder, *folder.parents] if above.name == package]
        candidates.append(folder / inner)
    elif filename.startswith("file://"):
        candidates.append(Path(filename[len("file://"):]))
    else:
        candidates.append(folder / filename)
    for candidate in candidates:
        if candidate.is_file():
            return Path(os.path.normpath(candidate)), candidates
    return None, candidates


def _geometry(el: etree._Element, path: Path, what: str, roots: tuple[Path, ...]) -> Geometry:
    geometry = el.find("geometry")
    if geometry is None or len([c for c in geometry if isinstance(c.tag, str)]) == 0:
        raise _fail(f"<{el.tag}> needs a <geometry> with a <box>, <cylinder>, <sphere> or <mesh>.", path,
                    el.sourceline, what)
    shape = next(c for c in geometry if isinstance(c.tag, str))
    origin = _origin(el, path, what)
    line = shape.sourceline
    if shape.tag == "box":
        size = _numbers(shape, "size", 3, None, path, what)
        if min(size) <= 0:
            raise _fail(f"a box's size must be three numbers greater than 0, not '{shape.get('size')}'.", path, line,
                        what)
        return Geometry("box", origin, line, size=(size[0], size[1], size[2]))
    if shape.tag == "cylinder":
        radius = _number(shape, "radius", path, what)
        length = _number(shape, "length", path, what)
        if radius is None or length is None or radius <= 0 or length <= 0:
            raise _fail("a <cylinder> needs radius and length greater than 0.", path, line, what)
        return Geometry("cylinder", origin, line, radius=radius, length=length)
    if shape.tag == "sphere":
        radius = _number(shape, "radius", path, what)
        if radius is None or radius <= 0:
            raise _fail("a <sphere> needs a radius greater than 0.", path, line, what)
        return Geometry("sphere", origin, line, radius=radius)
    if shape.tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise _fail("a <mesh> needs a filename=\"...\".", path, line, what)
        scale = _scale(shape, path, what)
        found, _ = resolve_mesh(filename, path, roots)
        return Geometry("mesh", origin, line, filename=filename, mesh=found, scale=(scale[0], scale[1], scale[2]))
    raise _fail(f"unknown geometry <{shape.tag}>; URDF has <box>, <cylinder>, <sphere> and <mesh>.", path, line, what)


def _scale(shape: etree._Element, path: Path, what: str) -> tuple[float, float, float]:
    """A mesh's scale: three numbers, or one for all axes; more than three are read as pybullet reads
    them, the first three (pybullet_data's racecar_differential.urdf has "1 1 1 1")."""
    text = shape.get("scale")
    if text is None:
        return (1.0, 1.0, 1.0)
    try:
        values = [float(v) for v in _expand(text).split()]
    except ValueError:
        values = []
    if len(values) == 1:
        values *= 3
    if len(values) < 3 or not all(math.isfinite(v) and v > 0 for v in values[:3]):
        raise _fail(f"<mesh scale=\"{text}\"> must be three numbers greater than 0 (x y z) or one for all axes.",
                    path, shape.sourceline, what)
    return (values[0], values[1], values[2])


def _inertial(el: etree._Element, path: Path, what: str) -> Inertial:
    mass_el = el.find("mass")
    if mass_el is None:
        raise _fail("<inertial> needs a <mass value=\"...\"/> (kg).", path, el.sourceline, what)
    mass = _numbers(mass_el, "value", 1, None, path, what)[0]
    inertia_el = el.find("inertia")
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    values = [0.0] * 6 if inertia_el is None else [_numbers(inertia_el, n, 1, (0.0,), path, what)[0] for n in names]
    ixx, ixy, ixz, iyy, iyz, izz = values
    return Inertial(mass, _origin(el, path, what), (ixx, ixy, ixz, iyy, iyz, izz), el.sourceline)


def load_urdf(path: str | Path, package_roots: tuple[Path, ...] | list[Path] = (), *,
              require_meshes: bool = True) -> RobotDescription:
    """Read a URDF file. Raises ProjectError naming the file, the line and the element for a file that
    is not XML, not a <robot>, a link or joint without a name, a name used twice, a joint that names a
    missing link, a link with two parents, a loop, more than one root, a bad number, and (with
    `require_meshes`) a mesh file that is not found (listing where it was looked for)."""
    path = Path(os.path.normpath(Path(path).absolute()))
    roots = tuple(Path(r) for r in package_roots)
    if path.suffix.lower() == ".xacro":
        raise _fail("xacro files are not expanded by SEAR; expand it first (`xacro robot.urdf.xacro > robot.urdf`) "
                    "and choose the .urdf.", path)
    try:
        parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)
        tree = etree.parse(str(path), parser)
    except OSError as exc:
        raise _fail(f"the URDF cannot be read ({exc}); choose it again.", path) from None
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        raise _fail(f"this is not well-formed XML ({exc.msg}); fix the file.", path, line) from None
    robot = tree.getroot()
    if robot.tag != "robot":
        raise _fail(f"the root element is <{robot.tag}>, not <robot>: this is not a URDF.", path, robot.sourceline)
    links: dict[str, Link] = {}
    for el in robot.iterfind("link"):
        name = el.get("name")
        if not name:
            raise _fail("a <link> has no name=\"...\".", path, el.sourceline)
        what = f"link '{name}'"
        if name in links:
            raise _fail(f"two links are called '{name}' (the first on line {links[name].line}); rename one.",
                        path, el.sourceline, what)
        inertial_el = el.find("inertial")
        links[name] = Link(
            name, el.sourceline,
            inertial=_inertial(inertial_el, path, what) if inertial_el is not None else None,
            visuals=tuple(_geometry(v, path, what, roots) for v in el.iterfind("visual")),
            collisions=tuple(_geometry(c, path, what, roots) for c in el.iterfind("collision")),
        )
    if not links:
        raise _fail("the URDF has no <link>.", path, robot.sourceline)
    joints: dict[str, Joint] = {}
    parent_of: dict[str, Joint] = {}
    for el in robot.iterfind("joint"):
        name = el.get("name")
        if not name:
            raise _fail("a <joint> has no name=\"...\".", path, el.sourceline)
        what = f"joint '{name}'"
        if name in joints:
            raise _fail(f"two joints are called '{name}' (the first on line {joints[name].line}); rename one.",
                        path, el.sourceline, what)
        kind = el.get("type")
        if kind not in JOINT_TYPES:
            raise _fail(f"type=\"{kind}\" is not a URDF joint type; use one of {', '.join(JOINT_TYPES)}.", path,
                        el.sourceline, what)
        ends = {}
        for end in ("parent", "child"):
            end_el = el.find(end)
            if end_el is None or not end_el.get("link"):
                raise _fail(f"the joint needs a <{end} link=\"...\"/>.", path, el.sourceline, what)
            if end_el.get("link") not in links:
                raise _fail(f"the {end} link '{end_el.get('link')}' does not exist; the links are: "
                            f"{', '.join(links)}.", path, end_el.sourceline, what)
            ends[end] = end_el.get("link")
        axis = (1.0, 0.0, 0.0)
        axis_el = el.find("axis")
        if axis_el is not None:
            axis = _numbers(axis_el, "xyz", 3, (1.0, 0.0, 0.0), path, what)  # type: ignore[assignment]
            norm = math.sqrt(sum(a * a for a in axis))
            if norm < 1e-9 and kind in MOVING_JOINT_TYPES:
                raise _fail("the joint's <axis xyz> is all zeros; give its direction, e.g. 0 1 0.", path,
                            axis_el.sourceline, what)
            axis = tuple(a / norm for a in axis) if norm >= 1e-9 else (1.0, 0.0, 0.0)  # type: ignore[assignment]
        limit = el.find("limit")
        lower = upper = effort = velocity = None
        if limit is not None:
            lower = _number(limit, "lower", path, what)
            upper = _number(limit, "upper", path, what)
            effort = _number(limit, "effort", path, what)
            velocity = _number(limit, "velocity", path, what)
        joint = Joint(name, kind, ends["parent"], ends["child"], el.sourceline, _origin(el, path, what),
                      (axis[0], axis[1], axis[2]), lower, upper, effort, velocity)
        if joint.child == joint.parent:
            raise _fail(f"the joint connects link '{joint.child}' to itself.", path, el.sourceline, what)
        if joint.child in parent_of:
            first = parent_of[joint.child]
            raise _fail(f"link '{joint.child}' is the child of two joints ('{first.name}' on line {first.line} and "
                        "this one): a URDF is a tree, each link has one parent.", path, el.sourceline, what)
        parent_of[joint.child] = joint
        joints[name] = joint
    roots_found = [name for name in links if name not in parent_of]
    if not roots_found:
        joint = next(iter(joints.values()))
        raise _fail("the joints form a loop: every link has a parent, so there is no base link. A URDF is a tree; "
                    "remove a joint of the loop.", path, joint.line, f"joint '{joint.name}'")
    # Links reachable from the first root; a loop among the rest leaves them unreachable.
    reachable = _reachable(roots_found[0], joints)
    for name in links:
        if name not in reachable and name not in roots_found:
            loop = _loop_through(name, parent_of)
            if loop:
                joint = parent_of[name]
                raise _fail(f"the joints form a loop ({' -> '.join(loop)}): a URDF is a tree; remove a joint of "
                            "the loop.", path, joint.line, f"joint '{joint.name}'")
    if len(roots_found) > 1:
        other = links[roots_found[1]]
        raise _fail(f"link '{other.name}' is joined to nothing: the URDF has {len(roots_found)} separate parts "
                    f"(base links {', '.join(repr(r) for r in roots_found)}); join it with a joint.", path,
                    other.line, f"link '{other.name}'")
    desc = RobotDescription(path, robot.get("name") or path.stem, links, joints, roots_found[0], roots)
    if require_meshes:
        missing = desc.missing_meshes()
        if missing:
            link, geometry = missing[0]
            _, looked = resolve_mesh(geometry.filename, path, roots)
            raise _fail(f"the mesh '{geometry.filename}' was not found (looked for "
                        f"{', '.join(str(p) for p in looked)}); add the folder that holds the package to the package "
                        "roots, or fix the path.", path, geometry.line, f"link '{link.name}'")
    return desc


def _reachable(root: str, joints: dict[str, Joint]) -> set[str]:
    seen, todo = {root}, [root]
    while todo:
        parent = todo.pop()
        for joint in joints.values():
            if joint.parent == parent and joint.child not in seen:
                seen.add(joint.child)
                todo.append(joint.child)
    return seen


def _loop_through(link: str, parent_of: dict[str, Joint]) -> list[str]:
    """The links of the loop that following parents from `link` runs into ([] when it ends at a root)."""
    order: list[str] = []
    name: str | None = link
    while name is not None and name not in order:
        order.append(name)
        joint = parent_of.get(name)
        name = joint.parent if joint is not None else None
    if name is None:
        return []
    start = order.index(name)
    return [*order[start:], name]


# --- wheels --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WheelInfo:
    """A joint that drives a wheel, as the vehicle needs it."""

    joint: str
    link: str
    centre: tuple[float, float, float]
    """Wheel centre (child link origin) in the root frame at the zero pose, m."""
    radius: float
    """m, from its collision cylinder or sphere, or the collision shapes' extent."""
    forward_sign: float
    """+1 when a positive joint speed rolls the robot forward (+x), else -1."""


@dataclass(frozen=True)
class WheelProposal:
    """Which joints SEAR proposes as the left and right wheels and as steering joints."""

    left: tuple[WheelInfo, ...] = ()
    right: tuple[WheelInfo, ...] = ()
    steering: tuple[str, ...] = ()
    """Joints with a vertical axis above a wheel (car steering)."""

    @property
    def wheels(self) -> tuple[WheelInfo, ...]:
        return self.left + self.right


_NOT_WHEEL = ("steer", "hinge", "caster", "castor", "arm", "gripper", "finger", "pan", "tilt", "head")


def _axis_in_root(desc: RobotDescription, joint: Joint, poses: dict[str, np.ndarray]) -> np.ndarray:
    rotation = (poses[joint.parent] @ joint.origin.matrix())[:3, :3]
    return rotation @ np.asarray(joint.axis)


def wheel_info(desc: RobotDescription, joint_name: str, poses: dict[str, np.ndarray] | None = None) -> WheelInfo:
    """What the vehicle needs of joint `joint_name` used as a wheel."""
    poses = poses or desc.link_poses()
    joint = desc.joints[joint_name]
    axis = _axis_in_root(desc, joint, poses)
    centre = poses[joint.child][:3, 3]
    return WheelInfo(joint.name, joint.child, (float(centre[0]), float(centre[1]), float(centre[2])),
                     _wheel_radius(desc, joint.child, axis, poses), 1.0 if axis[1] >= 0 else -1.0)


def _wheel_radius(desc: RobotDescription, link: str, axis: np.ndarray, poses: dict[str, np.ndarray]) -> float:
    shapes = desc.links[link].collisions or desc.links[link].visuals
    for geometry in shapes:
        if geometry.kind in ("cylinder", "sphere"):
            return geometry.radius
    for geometry in shapes:
        if geometry.kind in ("box", "mesh") and (geometry.kind == "box" or geometry.mesh is not None):
            try:
                mesh = geometry.shape()
            except ProjectError:
                continue
            # Half the extent across the axle: the largest distance of a vertex from the axle.
            rotation = poses[link][:3, :3]
            local_axis = rotation.T @ axis
            vertices = np.asarray(mesh.vertices)
            across = vertices - np.outer(vertices @ local_axis, local_axis)
            return float(np.linalg.norm(across, axis=1).max())
    return 0.0


def propose_wheels(desc: RobotDescription) -> WheelProposal:
    """SEAR's proposal of wheels: continuous joints (and revolute ones without limits) whose axis lies
    across the robot (within 25° of the root's y axis at the zero pose) and whose joint or link name is
    not a steering, caster or arm part; left when their centre lies at y > 0 in the root frame, right
    when at y < 0 (by the name, 'left'/'right', when y is 0). Steering joints: joints with an axis within
    25° of vertical whose subtree holds a proposed wheel."""
    poses = desc.link_poses()
    left: list[WheelInfo] = []
    right: list[WheelInfo] = []
    for joint in desc.joints.values():
        unlimited = joint.type == "continuous" or (joint.type == "revolute" and joint.lower is None
                                                   and joint.upper is None)
        names = f"{joint.name} {joint.child}".lower()
        if not unlimited or any(word in names for word in _NOT_WHEEL):
            continue
        axis = _axis_in_root(desc, joint, poses)
        if abs(axis[1]) < math.cos(math.radians(25)):
            continue
        info = wheel_info(desc, joint.name, poses)
        side = info.centre[1]
        if abs(side) < 1e-6:
            side = 1.0 if "left" in names else -1.0 if "right" in names else 0.0
        if side > 0:
            left.append(info)
        elif side < 0:
            right.append(info)
    wheel_links = {w.link for w in left + right}
    steering = []
    for joint in desc.joints.values():
        if not joint.moves or joint.type == "prismatic":
            continue
        axis = _axis_in_root(desc, joint, poses)
        if abs(axis[2]) >= math.cos(math.radians(25)) and wheel_links & set(desc.subtree(joint.child)):
            steering.append(joint.name)
    return WheelProposal(tuple(left), tuple(right), tuple(steering))


@dataclass(frozen=True)
class UrdfWheels:
    """Which joints are the left and right wheels and the steering joints."""

    left: tuple[WheelInfo, ...]
    right: tuple[WheelInfo, ...]
    steering: tuple[str, ...]


def choose_wheels(desc: RobotDescription, left: tuple[str, ...] | None, right: tuple[str, ...] | None,
                  steering: tuple[str, ...] | None) -> UrdfWheels:
    """The wheels the project marks (None: SEAR's proposal for that list). Raises ProjectError naming a
    joint that does not exist or is fixed, and when no wheel is left on a side."""
    proposal = propose_wheels(desc)
    poses = desc.link_poses()

    def pick(names: tuple[str, ...] | None, proposed: tuple, what: str, field: str) -> tuple:
        if names is None:
            return proposed
        for name in names:
            joint = desc.joints.get(name)
            if joint is None:
                raise ProjectError(f"the {what} joint '{name}' is not a joint of {desc.path.name}; its joints are: "
                                   f"{', '.join(desc.joints)}.", field=field)
            if not joint.moves or joint.type == "prismatic":
                raise ProjectError(f"the {what} joint '{name}' is a {joint.type} joint; wheels and steering turn on "
                                   "revolute or continuous joints.", field=field)
        return tuple(wheel_info(desc, n, poses) for n in names) if what != "steering" else names

    chosen = UrdfWheels(pick(left, proposal.left, "left wheel", "body.left_wheels"),
                        pick(right, proposal.right, "right wheel", "body.right_wheels"),
                        pick(steering, proposal.steering, "steering", "body.steering_joints"))
    for side, wheels in (("left", chosen.left), ("right", chosen.right)):
        if not wheels:
            raise ProjectError(f"{desc.path.name} has no {side} wheel: SEAR found no continuous joint with an axis "
                               f"across the robot on its {side}; name the {side} wheel joints on the Robot Body tab.",
                               field=f"body.{side}_wheels")
    return chosen


def wheel_ids(wheels: UrdfWheels) -> dict[str, str]:
    """The key of each wheel joint in the robot's state: the four WHEEL_IDS for two wheels a side
    (front = larger x), else the joint names."""
    if len(wheels.left) == 2 and len(wheels.right) == 2:
        out = {}
        for side, pair in (("left", wheels.left), ("right", wheels.right)):
            front, rear = sorted(pair, key=lambda w: -w.centre[0])
            out[front.joint], out[rear.joint] = f"{side}_front", f"{side}_rear"
        return out
    return {w.joint: w.joint for w in wheels.left + wheels.right}


# --- the collision report ------------------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """One line of the collision report."""

    kind: Literal["overlap", "inertia", "mass", "mesh"]
    message: str
    links: tuple[str, ...]
    line: int | None = None
    """Line in the URDF of the element it is about."""

    def __str__(self) -> str:
        return self.message


def _halfspaces(mesh: trimesh.Trimesh) -> np.ndarray | None:
    """The convex hull of `mesh` as rows (unit normal, offset) with normal·x + offset <= 0 inside; None
    for a flat or degenerate shape."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return np.asarray(ConvexHull(np.asarray(mesh.vertices)).equations)
    except (QhullError, ValueError):
        return None


def overlap_depth(a: np.ndarray, b: np.ndarray) -> float:
    """How far two convex hulls (halfspace rows from `_halfspaces`) overlap, m: the radius of the
    largest ball inside both (0 when they only touch, negative when apart). A linear program:
    maximise t with n·x + t <= -offset for every face of both."""
    from scipy.optimize import linprog

    rows = np.vstack([a, b])
    a_ub = np.column_stack([rows[:, :3], np.ones(len(rows))])
    result = linprog(c=[0, 0, 0, -1], A_ub=a_ub, b_ub=-rows[:, 3], bounds=[(None, None)] * 3 + [(None, 1e3)],
                     method="highs")
    return float(result.x[3]) if result.status == 0 else -math.inf


def collision_report(desc: RobotDescription) -> list[Finding]:
    """What may make the robot misbehave, each a sentence naming the links:

    - pairs of links, not parent and child of one joint, whose collision shapes overlap at the zero pose
      by more than OVERLAP_TOLERANCE. Shapes are compared as convex hulls, as pybullet collides moving
      links (a mesh link's hull). SEAR (pybullet's default) does not collide a robot's links with each
      other, so they do not fight here, but such an overlap is usually a misplaced shape, and simulators
      or planners with self-collision (parent/child pairs excluded, as here) would push them apart;
    - links without <inertial> that have collision shapes or a moving joint (pybullet gives them 1 kg and
      an inertia of 1 kg·m² about each axis), a mass <= 0 or > MAX_LINK_MASS kg, an inertia that is not
      physical (a negative principal moment, or one larger than the other two together);
    - collision meshes that are not watertight after SEAR's repair (their inside is undefined; pybullet
      uses their convex hull)."""
    findings: list[Finding] = []
    for link in desc.links.values():
        joint = desc.parent_joint(link.name)
        inertial = link.inertial
        if inertial is None:
            if link.collisions or (joint is not None and joint.moves):
                findings.append(Finding("inertia", f"link '{link.name}' has no <inertial>: the simulation gives it "
                                        "1 kg and an inertia of 1 kg·m² about each axis; add its mass and inertia.",
                                        (link.name,), link.line))
            continue
        if inertial.mass <= 0 or inertial.mass > MAX_LINK_MASS:
            findings.append(Finding("mass", f"link '{link.name}' has a suspicious mass of {inertial.mass:g} kg "
                                    f"(expected more than 0 and at most {MAX_LINK_MASS:g} kg); check its unit.",
                                    (link.name,), inertial.line))
        moments = np.linalg.eigvalsh(inertial.matrix())
        if moments.min() <= 0 or moments.max() > moments.sum() - moments.max() + 1e-9 * max(moments.max(), 1e-12):
            findings.append(Finding("inertia", f"link '{link.name}' has an inertia that no body has (principal "
                                    f"moments {', '.join(f'{m:.4g}' for m in moments)} kg·m²: each must be "
                                    "greater than 0 and at most the sum of the other two).", (link.name,),
                                    inertial.line))
    for link in desc.links.values():
        for geometry in link.collisions:
            if geometry.kind != "mesh" or geometry.mesh is None:
                continue
            try:
                mesh = geometry.shape()
            except ProjectError as exc:
                findings.append(Finding("mesh", f"link '{link.name}': collision mesh '{geometry.filename}' cannot be "
                                        f"read: {exc.message}", (link.name,), geometry.line))
                continue
            if not mesh.is_watertight:
                findings.append(Finding("mesh", f"link '{link.name}': collision mesh '{geometry.filename}' is not "
                                        "watertight (it has holes), so its inside is undefined; the simulation "
                                        "collides with its convex hull. Close it, or use a primitive shape.",
                                        (link.name,), geometry.line))
    findings += _overlaps(desc)
    return findings


def _overlaps(desc: RobotDescription) -> list[Finding]:
    poses = desc.link_poses()
    hulls: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in desc.links:
        try:
            mesh = desc.collision_mesh(name, poses)
        except ProjectError:
            continue  # reported as an unreadable mesh
        if mesh is None:
            continue
        rows = _halfspaces(mesh)
        if rows is not None:
            hulls[name] = (rows, np.asarray(mesh.bounds))
    names = list(hulls)
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if desc.adjacent(a, b):
                continue
            (rows_a, box_a), (rows_b, box_b) = hulls[a], hulls[b]
            if np.any(box_a[0] > box_b[1]) or np.any(box_b[0] > box_a[1]):
                continue
            depth = overlap_depth(rows_a, rows_b)
            if depth > OVERLAP_TOLERANCE / 2:
                found.append(Finding("overlap", f"links '{a}' and '{b}' overlap at the zero pose (their collision "
                                     f"shapes share a region at least {2000 * depth:.0f} mm across). SEAR, like "
                                     "pybullet, does not collide a robot's links with each other, but a collision "
                                     "shape there is usually misplaced or too large; check it.",
                                     (a, b), desc.links[b].line))
    return found


# --- for the simulation --------------------------------------------------------------------------

def resolved_urdf(desc: RobotDescription) -> bytes:
    """The URDF's text with every mesh filename replaced by the absolute path SEAR found and the ROS
    substitutions expanded, for pybullet's loader (which knows neither package roots nor `$(optenv)`)."""
    parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)
    tree = etree.parse(str(desc.path), parser)
    for mesh in tree.getroot().iter("mesh"):
        filename = mesh.get("filename")
        if filename:
            found, _ = resolve_mesh(filename, desc.path, desc.package_roots)
            if found is not None:
                mesh.set("filename", str(found))
    for el in tree.getroot().iter():
        if not isinstance(el.tag, str):
            continue
        for key, value in el.attrib.items():
            if "$(" in value:
                el.set(key, _expand(value))
    return bytes(etree.tostring(tree, xml_declaration=True, encoding="utf-8"))


def lowest_point(desc: RobotDescription) -> float:
    """z (m, root frame, zero pose) of the lowest point of all collision shapes (0 without any): how far
    the root frame lies above the ground when the robot stands at rest."""
    poses = desc.link_poses()
    lows = []
    for name in desc.links:
        try:
            mesh = desc.collision_mesh(name, poses)
        except ProjectError:
            continue
        if mesh is not None:
            lows.append(float(mesh.bounds[0][2]))
    return min(lows) if lows else 0.0


def mount_on_link(desc: RobotDescription, link: str, xyz: tuple[float, float, float],
                  rpy: tuple[float, float, float]) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """A mounting pose given in `link`'s frame (xyz m; roll, pitch, yaw rad as URDF and the sensors file
    apply them: R = Rz(yaw)·Ry(pitch)·Rx(roll)) as the same pose in the root link's frame. Raises
    ProjectError (no file: the caller's) for a link the URDF does not have, or one that a moving joint
    separates from the base (the pose would change as it moves)."""
    if link not in desc.links:
        raise ProjectError(f"the robot {desc.path.name} has no link '{link}'; its links are: {', '.join(desc.links)}.")
    moving = [j.name for j in desc.chain(link) if j.moves]
    if moving:
        raise ProjectError(f"link '{link}' moves against the base (through joint '{moving[0]}'); sensors mount on "
                           "links fixed to the base: name such a link, or the base.")
    mount = np.eye(4)
    mount[:3, :3] = rpy_matrix(*rpy)
    mount[:3, 3] = xyz
    pose = desc.link_poses()[link] @ mount
    r = pose[:3, :3]
    pitch = math.asin(max(-1.0, min(1.0, -r[2, 0])))
    roll, yaw = math.atan2(r[2, 1], r[2, 2]), math.atan2(r[1, 0], r[0, 0])
    if abs(abs(pitch) - math.pi / 2) < 1e-9:  # gimbal lock: roll folded into yaw
        roll, yaw = 0.0, math.atan2(-r[0, 1], r[1, 1])
    x, y, z = (float(v) for v in pose[:3, 3])
    return (x, y, z), (roll, pitch, yaw)


@dataclass(frozen=True)
class TreeRow:
    """One row of the link/joint tree the window shows: a link, or the joint leading to it."""

    depth: int
    link: str
    joint: Joint | None
    mass: float | None
    """kg, None without <inertial>."""


def tree_rows(desc: RobotDescription) -> list[TreeRow]:
    """The tree depth first from the root, in file order: each link with the joint from its parent."""
    rows: list[TreeRow] = []

    def visit(link: str, depth: int, joint: Joint | None) -> None:
        inertial = desc.links[link].inertial
        rows.append(TreeRow(depth, link, joint, inertial.mass if inertial else None))
        for child in desc.child_joints(link):
            visit(child.child, depth + 1, child)

    visit(desc.root, 0, None)
    return rows


def describe_joint(joint: Joint) -> str:
    """'continuous, axis 0 1 0' / 'revolute -1..1 rad, 10 N·m' for the tree."""
    unit = "m" if joint.type == "prismatic" else "rad"
    parts = [joint.type]
    if joint.moves:
        parts.append("axis " + " ".join(f"{a:g}" for a in joint.axis))
    if joint.lower is not None or joint.upper is not None:
        lower = "-∞" if joint.lower is None else f"{joint.lower:g}"
        upper = "∞" if joint.upper is None else f"{joint.upper:g}"
        parts.append(f"{lower}..{upper} {unit}")
    if joint.effort is not None:
        parts.append(f"{joint.effort:g} {'N' if joint.type == 'prismatic' else 'N·m'}")
    return ", ".join(parts)
