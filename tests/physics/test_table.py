"""Objects with height: tables (World.add_table) and shelves (a fixed box up in the air, add_box), against
the rover's measured size and the geometry the call is given.

The rover rests with its origin 0.119 m up; its deck top is 0.24 m above the ground and its body's front
face 0.30 m ahead of its origin (tests/physics/test_vehicle.py measures the same). A table or shelf whose
underside is higher than 0.24 m lets it through; a lower one stops it at its edge.
"""

from __future__ import annotations

import numpy as np
import pytest

from sear.physics.world import TABLE_TOP
from sear.sensors.raycast import RayCaster

from .helpers import run

DECK_TOP = 0.24
"""m above the ground: the highest point of the rover's body at rest."""
FRONT = 0.30
"""m from the rover's origin to its body's front face."""
TABLE_X, WIDTH, DEPTH = 3.0, 1.0, 1.2
"""The table in the driving tests: centred 3 m ahead (+x) of the rover's start, 1 m along its path and
1.2 m across it (legs at y = ±0.575 m, outside the rover's 0.56 m width)."""


def _drive(world, seconds: float = 5.0) -> float:
    """Settle, drive ahead at 30 N for `seconds`; the rover origin's x, m."""
    run(world, 1.0)
    world.vehicles[0].accelerate(30.0)
    run(world, seconds)
    return float(world.vehicles[0].state().position[0])


def test_table_parts_stand_where_the_call_puts_them_and_rays_see_them(world_factory):
    world = world_factory()
    index = world.add_table(TABLE_X, 0.0, WIDTH, DEPTH, 0.5)
    table = world.obstacles[index]
    assert table.kind == "table" and len(table.body_ids) == 5  # a top and four legs
    caster = RayCaster(world.client, world.robot_body_ids(0), world.static_world)
    # Straight down onto the top's middle: its upper face at the height asked for.
    down = caster.cast(np.array([[TABLE_X, 0.0, 2.0]]), np.array([[TABLE_X, 0.0, 0.0]]))
    assert 2.0 - 2.0 * down.fraction[0] == pytest.approx(0.5, abs=1e-3)
    # Straight up from the ground under the middle: the underside, TABLE_TOP lower.
    up = caster.cast(np.array([[TABLE_X, 0.0, 0.01]]), np.array([[TABLE_X, 0.0, 1.01]]))
    assert 0.01 + up.fraction[0] == pytest.approx(0.5 - TABLE_TOP, abs=1e-3)
    # Along the ground at 0.2 m, through the two legs at y = +0.575 m: the near leg's face is at x = 2.5 m
    # (flush with the top's edge); through the middle (y = 0) nothing between the legs.
    legs = caster.cast(np.array([[0.0, 0.575, 0.2], [0.0, 0.0, 0.2]]), np.array([[6.0, 0.575, 0.2], [6.0, 0.0, 0.2]]))
    assert 6.0 * legs.fraction[0] == pytest.approx(TABLE_X - WIDTH / 2, abs=1e-3)
    assert legs.body[0] in table.body_ids
    assert legs.fraction[1] == 1.0 and legs.body[1] == -1
    # Beside the legs (outside the table's footprint) the ray passes: the legs are no wider than asked.
    beside = caster.cast(np.array([[0.0, 0.61, 0.2]]), np.array([[6.0, 0.61, 0.2]]))
    assert beside.body[0] == -1


def test_the_rover_drives_under_a_table_that_clears_it(world_factory):
    world = world_factory()
    world.add_table(TABLE_X, 0.0, WIDTH, DEPTH, DECK_TOP + TABLE_TOP + 0.06)  # underside 0.30 m
    assert _drive(world) > TABLE_X + WIDTH / 2 + FRONT  # all of it past the table's far edge


def test_a_table_lower_than_the_rover_stops_it(world_factory):
    world = world_factory()
    world.add_table(TABLE_X, 0.0, WIDTH, DEPTH, 0.2)  # underside 0.16 m, below the deck's top
    x = _drive(world)
    assert x < TABLE_X - WIDTH / 2 - FRONT + 0.05  # its front at the table's near edge
    assert x > 1.0  # positive control: it did drive


def test_a_shelf_made_with_add_box_at_a_height(world_factory):
    high, low = world_factory(), world_factory()
    # Fixed 0.6 m boxes centred 3 m ahead: one with its underside at 0.30 m, one at 0.15 m.
    high.add_box(TABLE_X, 0.0, 0.30 + 0.3, size=0.6, mass=0.0)
    low.add_box(TABLE_X, 0.0, 0.15 + 0.3, size=0.6, mass=0.0)
    assert _drive(high) > TABLE_X + 0.3 + FRONT
    assert _drive(low) < TABLE_X - 0.3 - FRONT + 0.05


def test_bad_table_sizes_are_refused(world_factory):
    world = world_factory()
    for bad in ((0.0, 1.0, 1.0), (1.0, -1.0, 1.0), (1.0, 1.0, float("nan"))):
        with pytest.raises(ValueError, match="add_table"):
            world.add_table(0.0, 0.0, *bad)
    assert world.obstacles == []
