"""Fixtures of the physics tests."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from sear.models.loaded import load_models
from sear.physics.world import World
from sear.project import Project

from .helpers import rover_project


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


@pytest.fixture
def world_factory(tmp_path, make_world) -> Callable[..., World]:
    """Rover worlds (helpers.rover_project), each in a folder of its own, with the given project fields."""
    folders = itertools.count()

    def make(**kwargs) -> World:
        return make_world(rover_project(tmp_path / f"w{next(folders)}", **kwargs))

    return make
