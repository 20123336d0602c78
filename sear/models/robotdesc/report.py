"""The collision report of a robot description: what may make the robot misbehave (overlapping links,
missing or unphysical masses and inertias, collision meshes with holes), each a sentence naming the
links. Advice: a robot with findings still simulates.

    collision_report(desc)          # [Finding]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from sear.errors import ProjectError
from sear.models.robotdesc.model import RobotDescription

if TYPE_CHECKING:
    import trimesh

MAX_LINK_MASS = 1000.0
"""kg: a link heavier than this is reported as suspicious (a mass in grams, or a typo)."""
OVERLAP_TOLERANCE = 0.001
"""m: collision shapes that overlap by less than about this much are taken as touching, not overlapping
(CAD exports put parts face to face)."""


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
