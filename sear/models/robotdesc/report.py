"""The collision report of a robot description: what may make the robot misbehave (overlapping links,
missing or unphysical masses and inertias, collision meshes with holes), each a sentence naming the
links. Advice: a robot with findings still simulates.

    collision_report(desc)          # [Finding]
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from sear.errors import ProjectError
from sear.models.robotdesc.model import RobotDescription

if TYPE_CHECKING:
    import trimesh

MAX_LINK_MASS = 1000.0
"""kg: a link heavier than this is reported as suspicious (a mass in grams, or a typo)."""
SLOW_MOVING_JOINTS = 100
"""Moving joints past which the report says the simulation will be slow (measured in docs/urdf.md)."""
MAX_OVERLAPS = 50
"""Overlapping pairs the report names at most (then one line says it stopped)."""
MAX_OVERLAP_CHECKS = 2000
"""Pairs of links whose bounding boxes meet that are compared exactly (a small linear program each, about a
millisecond) at most: a robot of thousands of links piled in one place would otherwise take hours."""
OVERLAP_TOLERANCE = 0.001
"""m: collision shapes that overlap by less than about this much are taken as touching, not overlapping
(CAD exports put parts face to face)."""


@dataclass(frozen=True)
class Finding:
    """One line of the collision report."""

    kind: Literal["overlap", "inertia", "mass", "mesh", "size"]
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
      uses their convex hull);
    - more than SLOW_MOVING_JOINTS moving joints (the simulation's step slows steeply with them).

    Linear in the links but for the pairs whose bounding boxes meet; at most MAX_OVERLAP_CHECKS of those are
    compared and MAX_OVERLAPS overlaps named (then one line says the check stopped)."""
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
    moving = [joint for joint in desc.joints.values() if joint.moves]
    if len(moving) > SLOW_MOVING_JOINTS:
        findings.append(Finding("size", f"the robot has {len(moving)} moving joints: pybullet's step slows steeply "
                                "with them (a chain of 100 revolute joints took 2.6 ms of CPU a step, one of 250 "
                                "took 41 ms, ten times slower than real time at 240 Hz). Make joints that need not "
                                "move fixed.", (), moving[SLOW_MOVING_JOINTS].line))
    findings += _overlaps(desc)
    return findings


def _candidate_pairs(boxes: np.ndarray) -> Iterator[tuple[int, int]]:
    """Pairs (i, j), i < j in sorted order of their lower x, of the axis-aligned boxes (n x 2 x 3: lower and
    upper corners) that overlap: sorted along x, each box is compared (with numpy) only with the boxes that
    start before it ends, so links spread along a robot cost about n log n, not the n² of every pair."""
    order = np.argsort(boxes[:, 0, 0], kind="stable")
    lows, highs = boxes[order, 0], boxes[order, 1]
    ends = np.searchsorted(lows[:, 0], highs[:, 0], side="right")
    for i in range(len(order)):
        rest = slice(i + 1, int(ends[i]))
        hit = np.all((lows[rest, 1:] <= highs[i, 1:]) & (lows[i, 1:] <= highs[rest, 1:]), axis=1)
        for j in np.flatnonzero(hit):
            yield int(order[i]), int(order[i + 1 + j])


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
    if not names:
        return []
    found: list[Finding] = []
    checked = 0
    for i, k in _candidate_pairs(np.array([hulls[name][1] for name in names])):
        a, b = (names[i], names[k]) if i < k else (names[k], names[i])  # file order, as the report names them
        if desc.adjacent(a, b):
            continue
        if checked == MAX_OVERLAP_CHECKS or len(found) == MAX_OVERLAPS:
            found.append(Finding("overlap", f"the overlap check stopped after {len(found)} overlapping pairs of "
                                 f"links ({checked} pairs compared): so many links share a region that the rest "
                                 "are not compared; check where the collision shapes are placed.", (), None))
            break
        checked += 1
        depth = overlap_depth(hulls[a][0], hulls[b][0])
        if depth > OVERLAP_TOLERANCE / 2:
            found.append(Finding("overlap", f"links '{a}' and '{b}' overlap at the zero pose (their collision "
                                 f"shapes share a region at least {2000 * depth:.0f} mm across). SEAR, like "
                                 "pybullet, does not collide a robot's links with each other, but a collision "
                                 "shape there is usually misplaced or too large; check it.",
                                 (a, b), desc.links[b].line))
    order = {name: index for index, name in enumerate(desc.links)}
    return sorted(found, key=lambda f: tuple(order[n] for n in f.links) if f.links else (len(order),))
