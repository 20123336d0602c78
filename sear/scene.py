"""The project's <world>: obstacles placed in the World tab (or by hand), as plain dataclasses.

Positions, sizes and masses have the bounds the `sim.add_*` calls check (sear.simapi: WORLD_LIMIT,
MAX_SIZE, MAX_MASS), so a file cannot ask for what user code could not.

Every obstacle kind of user code's `sim.add_*` calls (box, wall, table, tree, shelf) can also stand in the
project file, so a world is built with the mouse and saved with the project; the simulation builds each
one with the same physics call user code makes (sear.physics.world), so both give the same bodies.

Frames and units: the world frame is ENU (x east, y north, z up, metres) with its origin at the terrain's
centre; `yaw` is the obstacle's turn about z from the east axis, radians, counter-clockwise seen from
above. Every obstacle stands on the terrain (its feet on the lowest ground under it, as sim.add_* puts
them), except a box given an explicit centre height `z`.

The robots' start poses are not held here: each robot's one start pose stays in its <body>
(`start_north`, `start_east`, `rotation`), which the World tab shows and moves.

The geometry shared by the physics and the settings window's drawing lives here too (pure numpy):
`parts` gives an obstacle's boxes in its own frame, so the editor draws what the simulation builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from sear.fields import param
from sear.simapi import MAX_MASS, MAX_SIZE, WORLD_LIMIT

TABLE_TOP = 0.04
"""Thickness of a table's top, m; at most a quarter of the table's height."""
TABLE_LEG = 0.05
"""Side of a table's square legs, m; at most a quarter of the table's width and depth."""
SHELF_PANEL = 0.02
"""Thickness of a shelf's side panels and boards, m; at most a quarter of its width and of the gap between
two boards, so a small shelf stays a shelf."""
MAX_SHELF_LEVELS = 50
"""The most boards a shelf holds."""
TREE_SIZE = (2.4, 2.4, 4.5)
"""A tree's bounding size, m: its crown's width (x, y) and its tip's height above its foot (z)."""


@dataclass
class Placed:
    """Something standing in the world: a name and where its centre is on the ground."""

    name: str = param("obstacle", kind="robotName", attribute=True, required=True)
    """Unique among the world's obstacles; the scene tree and messages name it."""
    x: float = param(0.0, minimum=-WORLD_LIMIT, maximum=WORLD_LIMIT, unit="m", label="East")
    """Metres east of the terrain centre (the obstacle's centre)."""
    y: float = param(0.0, minimum=-WORLD_LIMIT, maximum=WORLD_LIMIT, unit="m", label="North")
    """Metres north of the terrain centre (the obstacle's centre)."""


@dataclass
class Turned(Placed):
    """A placed obstacle with a heading and a choice between fixed and movable."""

    yaw: float = param(0.0, minimum=-2 * math.pi, maximum=2 * math.pi, unit="rad", decimals=4)
    """Turn about the vertical from the east axis, radians, counter-clockwise seen from above."""
    fixed: bool = param(True)
    """Fixed in place (a static body, nothing moves it) or movable (pushed, falls and tips under gravity)."""
    mass: float = param(10.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_MASS, unit="kg")
    """Mass of a movable obstacle, kg (a fixed one does not use it)."""

    @property
    def body_mass(self) -> float:
        """The pybullet mass: 0 for a fixed obstacle (a static body), else `mass`."""
        return 0.0 if self.fixed else self.mass


@dataclass
class Box(Turned):
    """A cube (sim.add_box), its edges along its yaw."""

    size: float = param(1.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m", label="Edge")
    """Edge length, m."""
    z: float | None = param(None, minimum=-WORLD_LIMIT, maximum=WORLD_LIMIT, unit="m", label="Centre height")
    """Height of the cube's centre, m; left out: its bottom rests on the highest ground under it."""
    fixed: bool = param(False)
    """Fixed in place (a static body) or movable (pushed, falls under gravity)."""
    mass: float = param(1.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_MASS, unit="kg")
    """Mass of a movable box, kg."""


@dataclass
class Wall(Turned):
    """A wall (sim.add_wall): its centre line `length` m long through (x, y) along its yaw, extended by
    half its thickness past each end so that walls sharing an end point close the corner."""

    length: float = param(2.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Length of the centre line between the two end points, m (the wall is length + thickness long)."""
    height: float = param(1.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Height above the lowest ground under it, m."""
    thickness: float = param(0.2, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Thickness, m."""
    mass: float = param(50.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_MASS, unit="kg")
    """Mass of a movable wall, kg."""

    def ends(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The centre line's end points (x1, y1), (x2, y2), m: what sim.add_wall takes."""
        dx, dy = math.cos(self.yaw) * self.length / 2.0, math.sin(self.yaw) * self.length / 2.0
        return (self.x - dx, self.y - dy), (self.x + dx, self.y + dy)


@dataclass
class Table(Turned):
    """A table (sim.add_table): a top on four square legs flush with its corners."""

    width: float = param(1.2, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Size of the top along the table's own x (its yaw), m."""
    depth: float = param(0.8, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Size of the top across it, m."""
    height: float = param(0.75, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Height of the top's upper face above the feet, m."""
    mass: float = param(15.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_MASS, unit="kg")
    """Mass of a movable table, kg."""


@dataclass
class Tree(Placed):
    """A tree (sim.add_tree): a trunk 0.3 m wide and 2 m tall under a conical crown 2.4 m wide whose tip is
    4.5 m above the foot; always fixed, its foot on the lowest ground under the trunk."""


@dataclass
class Shelf(Turned):
    """A shelf (sim.add_shelf): two side panels with `levels` boards between them, the lowest on the
    ground and the highest flush with the top; open at the front and back."""

    width: float = param(1.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Outer size along the shelf's own x (its yaw), side panels included, m."""
    depth: float = param(0.4, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Size front to back, m."""
    height: float = param(1.8, minimum=0.0, exclusive_minimum=True, maximum=MAX_SIZE, unit="m")
    """Height of the top board's upper face above the feet, m."""
    levels: int = param(5, minimum=2, maximum=MAX_SHELF_LEVELS, unit="")
    """Number of boards, 2 to 50, evenly spaced from the ground to the top."""
    mass: float = param(30.0, minimum=0.0, exclusive_minimum=True, maximum=MAX_MASS, unit="kg")
    """Mass of a movable shelf, kg."""


KINDS: dict[str, type] = {"box": Box, "wall": Wall, "table": Table, "tree": Tree, "shelf": Shelf}
"""Each obstacle kind's word (its XML element) and class, in the palette's order."""

_LISTS = {"box": "boxes", "wall": "walls", "table": "tables", "tree": "trees", "shelf": "shelves"}


def kind_of(obstacle: Placed) -> str:
    """The word of an obstacle's kind ('box', 'wall', ...)."""
    return next(word for word, cls in KINDS.items() if type(obstacle) is cls)


@dataclass
class Scene:
    """The project's <world>: the obstacles placed in it, one list per kind."""

    boxes: list[Box] = param(default_factory=list)
    """Cubes (sim.add_box)."""
    walls: list[Wall] = param(default_factory=list)
    """Walls (sim.add_wall)."""
    tables: list[Table] = param(default_factory=list)
    """Tables (sim.add_table)."""
    trees: list[Tree] = param(default_factory=list)
    """Trees (sim.add_tree)."""
    shelves: list[Shelf] = param(default_factory=list)
    """Shelves (sim.add_shelf)."""

    def obstacles(self) -> list[Any]:
        """Every obstacle, kind by kind in the palette's order (the order the simulation builds them)."""
        return [o for word in KINDS for o in self.list_of(word)]

    def list_of(self, kind: str) -> list[Any]:
        """The list holding obstacles of kind `kind` ('box', ...)."""
        items: list[Any] = getattr(self, _LISTS[kind])
        return items

    def field_of(self, obstacle: Placed) -> str:
        """The dotted project field of an obstacle ('world.walls.north.'), for messages."""
        return f"world.{_LISTS[kind_of(obstacle)]}.{obstacle.name}"

    def add(self, obstacle: Placed) -> Placed:
        """Append `obstacle` to its kind's list; returns it."""
        self.list_of(kind_of(obstacle)).append(obstacle)
        return obstacle

    def remove(self, name: str) -> Placed:
        """Remove and return the obstacle named `name` (KeyError when there is none)."""
        for word in KINDS:
            items = self.list_of(word)
            for index, item in enumerate(items):
                if item.name == name:
                    return items.pop(index)
        raise KeyError(name)

    def find(self, name: str) -> Any:
        """The obstacle named `name`, or None."""
        return next((o for o in self.obstacles() if o.name == name), None)

    def free_name(self, kind: str) -> str:
        """A name for a new obstacle of `kind` that no obstacle has: 'box1', 'box2', ..."""
        taken = {o.name for o in self.obstacles()}
        number = 1
        while f"{kind}{number}" in taken:
            number += 1
        return f"{kind}{number}"

    def duplicate(self, name: str, offset: float = 1.0) -> Placed:
        """A copy of obstacle `name`, `offset` m east of it under a free name, added; returns it."""
        original = self.find(name)
        if original is None:
            raise KeyError(name)
        copy = replace(original, name=self.free_name(kind_of(original)), x=original.x + offset)
        return self.add(copy)

    def problem(self) -> tuple[str, str] | None:
        """Why this world cannot be saved or built, as (message, field): two obstacles with one name (the
        schema checks names within a kind only); None when it is fine."""
        seen: set[str] = set()
        for obstacle in self.obstacles():
            where = self.field_of(obstacle)
            if obstacle.name in seen:
                return (f"two obstacles of the world are named {obstacle.name!r}; give each its own name "
                        "(the scene tree and messages name them).", f"{where}.name")
            seen.add(obstacle.name)
        return None


def parts(obstacle: Placed) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    """An obstacle's boxes as (centre, size) in its own frame (origin at its centre on the ground, x along
    its yaw, z up; metres): what the simulation builds, for drawing and picking. A tree is its bounding
    trunk and crown as two boxes (the simulation's are a cylinder and a cone)."""
    if isinstance(obstacle, Box):
        s = obstacle.size
        return [((0.0, 0.0, s / 2.0), (s, s, s))]
    if isinstance(obstacle, Wall):
        return [((0.0, 0.0, obstacle.height / 2.0),
                 (obstacle.length + obstacle.thickness, obstacle.thickness, obstacle.height))]
    if isinstance(obstacle, Table):
        return table_parts(obstacle.width, obstacle.depth, obstacle.height)
    if isinstance(obstacle, Shelf):
        return shelf_parts(obstacle.width, obstacle.depth, obstacle.height, obstacle.levels)
    if isinstance(obstacle, Tree):
        return [((0.0, 0.0, 1.0), (0.3, 0.3, 2.0)), ((0.0, 0.0, 3.0), (2.4, 2.4, 3.0))]
    raise TypeError(f"not an obstacle: {obstacle!r}")


def table_parts(width: float, depth: float, height: float) -> list[tuple[tuple[float, float, float],
                                                                          tuple[float, float, float]]]:
    """A table's top, then its four legs, as (centre, size) in its frame (feet at z = 0), metres."""
    top = min(TABLE_TOP, height / 4.0)
    leg = min(TABLE_LEG, width / 4.0, depth / 4.0)
    out = [((0.0, 0.0, height - top / 2.0), (width, depth, top))]
    for sx in (1, -1):
        for sy in (1, -1):
            out.append(((sx * (width - leg) / 2.0, sy * (depth - leg) / 2.0, (height - top) / 2.0),
                        (leg, leg, height - top)))
    return out


def shelf_parts(width: float, depth: float, height: float, levels: int) -> list[tuple[tuple[float, float, float],
                                                                                     tuple[float, float, float]]]:
    """A shelf's two side panels, then its boards from the lowest up, as (centre, size) in its frame
    (feet at z = 0), metres. Panels and boards are SHELF_PANEL thick (less for a tiny shelf)."""
    panel = min(SHELF_PANEL, width / 4.0, height / (4.0 * max(levels - 1, 1)))
    out = [((sx * (width - panel) / 2.0, 0.0, height / 2.0), (panel, depth, height)) for sx in (-1, 1)]
    inner = width - 2.0 * panel
    for level in range(levels):
        z = panel / 2.0 + level * (height - panel) / (levels - 1)
        out.append(((0.0, 0.0, z), (inner, depth, panel)))
    return out


def footprint(obstacle: Placed) -> tuple[float, float]:
    """An obstacle's size on the ground along its own x and y, m (for handles and snapping)."""
    if isinstance(obstacle, Tree):
        return TREE_SIZE[0], TREE_SIZE[1]
    xs = [c[0] + s * d[0] / 2 for c, d in parts(obstacle) for s in (-1, 1)]
    ys = [c[1] + s * d[1] / 2 for c, d in parts(obstacle) for s in (-1, 1)]
    return max(xs) - min(xs), max(ys) - min(ys)


def field_names(obstacle: Placed) -> list[str]:
    """The fields the scene tree and the property panel show for an obstacle, in order (name first)."""
    return [f.name for f in fields(obstacle)]

