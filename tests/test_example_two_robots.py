"""The example examples/two_robots_avoid: two rovers 10 m apart drive head-on at each other's start, both
running avoid.py in their own processes; each must see the other, pass it without touching, and stop
at its goal 10 m ahead of its own start (positions from the true poses, goals worked out here)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pybullet as p

from sear.loading import load_project
from sear.runtime.simulation import Simulation, TickResult

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "two_robots_avoid"
GOAL_AHEAD = 10.0
"""m: avoid.py's goal lies this far ahead of the start."""


def test_two_robots_pass_each_other_and_reach_their_goals(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example")
    loaded = load_project(tmp_path / "example" / "two_robots.prj")
    assert loaded.ok, loaded.problems
    output: list[str] = []
    simulation = Simulation(loaded, seed=1, output=output.append)
    try:
        west, east = simulation.robots
        starts = [run.state.position[:2].copy() for run in (west, east)]
        goals = [starts[0] + (GOAL_AHEAD, 0.0), starts[1] - (GOAL_AHEAD, 0.0)]  # facing east, facing west
        closest = math.inf
        touched = 0
        nearest_sonar = {"west": math.inf, "east": math.inf}
        widest = {"west": 0.0, "east": 0.0}

        def watch(result: TickResult) -> None:
            nonlocal closest, touched
            if not result.control:  # every control tick (60 Hz) is close enough: 1.7 cm apart at 1 m/s
                return
            closest = min(closest, float(np.linalg.norm(west.state.position[:2] - east.state.position[:2])))
            touched += bool(p.getContactPoints(west.vehicle.body_id, east.vehicle.body_id,
                                               physicsClientId=simulation.world.client))
            for run in (west, east):
                sonar = run.sim.read("front_sonar")
                if sonar is not None:
                    nearest_sonar[run.name] = min(nearest_sonar[run.name], sonar)
                widest[run.name] = max(widest[run.name], abs(float(run.state.position[1])))

        simulation.start_user_code()
        simulation.run(12.0, after_tick=watch)
        assert simulation.user_error is None, simulation.user_error
        ends = [run.state.position[:2] for run in (west, east)]
    finally:
        simulation.close()
    for name, end, goal in zip(("west", "east"), ends, goals, strict=True):
        assert np.linalg.norm(end - goal) < 0.8, f"{name} stopped at {end}, its goal is {goal}"
        assert nearest_sonar[name] < 2.5, f"{name}'s sonar never saw the other robot"
        assert widest[name] > 0.3, f"{name} never swerved"
    assert touched == 0 and closest > 0.8, f"the robots touched ({touched} ticks; closest {closest:.2f} m)"
    text = "".join(output)
    assert "[west]" in text and "[east]" in text and text.count("arrived") == 2
