"""Fixtures of the physics tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sear.models.loaded import load_models
from sear.physics.world import World
from sear.project import Project


@pytest.fixture
def make_world() -> Iterator[Callable[[Project], World]]:
    """Builds worlds from projects and closes every one of them after the test."""
    worlds: list[World] = []

    def make(project: Project) -> World:
        world = World(project, load_models(project))
        worlds.append(world)
        return world

    yield make
    for world in worlds:
        world.close()
