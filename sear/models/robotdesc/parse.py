"""Reading a URDF file into a RobotDescription (sear.models.robotdesc.model), every bad input a ProjectError
naming the file, the line and the element.

Why a reader of our own on lxml rather than a URDF library: every message about a bad file must name its
line (lxml keeps line numbers; yourdfpy and urdfpy drop them), and a URDF is a small format. The
simulation loads the same file with pybullet's own loader (sear.physics.urdf), from the text this reader
leaves in RobotDescription.resolved (every mesh path made absolute), so both read the same meshes.

    desc = load_urdf(path, package_roots=[Path("~/ros/src")])   # ProjectError for bad input

Mesh paths `package://PKG/REST` are looked up as ROOT/PKG/REST and ROOT/REST for each package root, then
in the folders above the URDF (a ROS package keeps its URDF in PKG/urdf/); relative paths are relative to
the URDF's folder; `file://` paths are absolute.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from lxml import etree

from sear.errors import ProjectError
from sear.models.filecheck import path_too_long
from sear.models.robotdesc.model import (
    JOINT_TYPES,
    MOVING_JOINT_TYPES,
    Geometry,
    Inertial,
    Joint,
    Link,
    Origin,
    RobotDescription,
)

MAX_LINKS = 1000
"""Links (and joints) a URDF may have at most. pybullet loads 1,000 links in a tenth of a second, but its step
grows steeply with the moving joints: a chain of 100, 250, 500 and 1,000 revolute links took 2.6 ms, 41 ms,
0.64 s and 1.35 s of CPU a step (docs/urdf.md); SEAR reads and checks 1,000 links in a few seconds. A file of
10,000 links (which took minutes to check before checks were linear) is refused at once."""
MAX_SHAPES = 4 * MAX_LINKS
"""<visual> and <collision> shapes a URDF may have at most, over all its links."""
URDF_SUFFIXES: tuple[str, ...] = (".urdf",)
"""Robot description files the Robot Body tab accepts besides meshes."""


def is_urdf(path: Path | None) -> bool:
    """Whether a body file is a URDF robot description (by its suffix; a .xacro too, which SEAR does not
    expand but names as such in its message, load_urdf)."""
    return path is not None and path.suffix.lower() in (*URDF_SUFFIXES, ".xacro")


def package_root_paths(text: str | None, project_folder: Path | None) -> list[Path]:
    """Package roots as a project writes them (Body.package_roots: folders separated by ';', '~'
    expanded) as folders, relative ones resolved against `project_folder`."""
    roots = []
    for part in (text or "").split(";"):
        if part.strip():
            root = Path(part.strip()).expanduser()
            roots.append(root if root.is_absolute() or project_folder is None else project_folder / root)
    return roots


def _fail(message: str, path: Path, line: int | None = None, element: str | None = None) -> ProjectError:
    return ProjectError(message, file=path, line=line, field=element)


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
        if _is_file(candidate):
            return Path(os.path.normpath(candidate)), candidates
    return None, candidates


def _is_file(path: Path) -> bool:
    """Whether `path` is a file, False for a path no file system can hold (pathlib lets 'File name too long'
    through) or one the system cannot look at."""
    if path_too_long(path):
        return False
    try:
        return path.is_file()
    except OSError:
        return False


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
    if inertia_el is None:
        raise _fail('<inertial> needs an <inertia ixx="..." iyy="..." izz="..."/> (kg·m² about the centre of mass; '
                    "ixy, ixz and iyz are 0 when left out): pybullet does not load an <inertial> without one. Add it, "
                    "or leave out the whole <inertial> (the simulation then gives the link 1 kg).", path,
                    el.sourceline, what)
    missing = [n for n in ("ixx", "iyy", "izz") if inertia_el.get(n) is None]
    if missing:
        wanted = ", ".join(f'{n}="..."' for n in missing)
        raise _fail(f"<inertia> needs {wanted} (kg·m²): pybullet does not load an "
                    "inertia without its three moments ixx, iyy and izz.", path, inertia_el.sourceline, what)
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    # pybullet reads the products ixy, ixz, iyz only when all three are given, and takes 0 for each otherwise.
    products = all(inertia_el.get(n) is not None for n in ("ixy", "ixz", "iyz"))
    values = [_numbers(inertia_el, n, 1, (0.0,), path, what)[0] if products or n in ("ixx", "iyy", "izz") else 0.0
              for n in names]
    ixx, ixy, ixz, iyy, iyz, izz = values
    return Inertial(mass, _origin(el, path, what), (ixx, ixy, ixz, iyy, iyz, izz), el.sourceline)


def load_urdf(path: str | Path, package_roots: tuple[Path, ...] | list[Path] = ()) -> RobotDescription:
    """Read a URDF file. Raises ProjectError naming the file, the line and the element for a file that
    is not XML, not a <robot>, a link or joint without a name, a name used twice, a joint that names a
    missing link, a link with two parents, a loop, more than one root, a bad number, and a mesh file that
    is not found (listing where it was looked for)."""
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
    _check_size(robot, path)
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
        if limit is None and kind in ("revolute", "prismatic"):
            raise _fail(f"a {kind} joint needs a <limit lower=\"...\" upper=\"...\" effort=\"...\" velocity=\"...\"/>: "
                        "pybullet does not load one without (a joint that turns without end is 'continuous').",
                        path, el.sourceline, what)
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
    missing = desc.missing_meshes()
    if missing:
        link, geometry = missing[0]
        _, looked = resolve_mesh(geometry.filename, path, roots)
        too_long = next((reason for reason in map(path_too_long, looked) if reason), None)
        if too_long:
            raise _fail(f"the mesh '{geometry.filename[:60]}' cannot be found: {too_long}", path, geometry.line,
                        f"link '{link.name}'")
        raise _fail(f"the mesh '{geometry.filename}' was not found (looked for "
                    f"{', '.join(str(p) for p in looked)}); add the folder that holds the package to the package "
                    "roots, or fix the path.", path, geometry.line, f"link '{link.name}'")
    desc.resolved = _resolved(tree, path, roots)
    return desc


def _check_size(robot: etree._Element, path: Path) -> None:
    """Refuse a URDF of more than MAX_LINKS links (or joints), or more than MAX_SHAPES shapes, naming the first
    element past the limit, before anything is built from it."""
    for tag, limit, what in (("link", MAX_LINKS, "links"), ("joint", MAX_LINKS, "joints")):
        elements = robot.findall(tag)
        if len(elements) > limit:
            raise _fail(f"the URDF has {len(elements):,} {what}; SEAR simulates robots of at most {limit:,} links "
                        "(pybullet's step slows with the square to fourth power of a robot's moving joints: "
                        "docs/urdf.md). Merge links that do not move relative to each other.", path,
                        elements[limit].sourceline)
    shapes = robot.findall("link/visual") + robot.findall("link/collision")
    if len(shapes) > MAX_SHAPES:
        shapes.sort(key=lambda el: el.sourceline or 0)
        raise _fail(f"the URDF has {len(shapes):,} <visual> and <collision> shapes; SEAR reads at most {MAX_SHAPES:,} "
                    "in a robot. Merge a link's shapes into one mesh.", path, shapes[MAX_SHAPES].sourceline)


def _reachable(root: str, joints: dict[str, Joint]) -> set[str]:
    """The links below `root` (and it), in time linear in the joints."""
    children: dict[str, list[str]] = {}
    for joint in joints.values():
        children.setdefault(joint.parent, []).append(joint.child)
    seen, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
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


def _resolved(tree: etree._ElementTree, path: Path, roots: tuple[Path, ...]) -> bytes:
    """The parsed file's text with every mesh filename replaced by the absolute path SEAR found and the ROS
    substitutions expanded, for pybullet's loader (RobotDescription.resolved). Changes `tree`."""
    for mesh in tree.getroot().iter("mesh"):
        filename = mesh.get("filename")
        if filename:
            found, _ = resolve_mesh(filename, path, roots)
            if found is not None:
                mesh.set("filename", str(found))
    for el in tree.getroot().iter():
        if not isinstance(el.tag, str):
            continue
        for key, value in el.attrib.items():
            if "$(" in value:
                el.set(key, _expand(value))
        # Every element on a line of its own: pybullet's loader refuses some files whose elements share one
        # long line (XML_ERROR_PARSING_ATTRIBUTE: measured with 100 links with <inertial> written on one
        # line, which it loads one per line). Whitespace between URDF elements means nothing.
        if len(el) and (el.text is None or not el.text.strip()):
            el.text = "\n"
        if el.tail is None or not el.tail.strip():
            el.tail = "\n"
    return bytes(etree.tostring(tree, xml_declaration=True, encoding="utf-8"))
