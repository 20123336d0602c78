"""Simulation loop benchmark: the demo world headless, against bare pybullet in the same process.

    python bench/run_bench.py [--seconds 4] [--rounds 5]

Runs the demo project headless (vehicle, all demo sensors, the demo user code running, CSV log on) and
prints its real-time factor and the cost of one SEAR tick relative to one bare
`pybullet.stepSimulation()` of the same bodies in the same world, measured in the same run: rounds of
SEAR ticks alternate with rounds of bare steps from the same saved physics state (restored afterwards),
so a machine shared with other work slows both alike. The median over rounds is the result; ratios, not
timings, hold across machines.

A breakdown says where a tick goes (each phase timed in place by a thin wrapper, ~1 µs per call):
the pybullet step, the raycast vehicle (our stand-in for Bullet's btRaycastVehicle, which pybullet's
Python API lacks: suspension rays and tyre forces every step), the vehicle state handed to sensors, the
sensors, the user code (hand-over to its worker thread and back included) and the CSV log; the rest is
the loop's own bookkeeping.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pybullet as p

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sear.cli import DEMO_DIR, ensure_demo_models  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.runtime import Simulation  # noqa: E402

PHASES = ("vehicle update", "vehicle state", "sensors", "user code", "CSV log")


def _timed(spent: dict[str, float], phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[phase] += time.perf_counter() - start

    return wrapper


def _instrument(simulation: Simulation, spent: dict[str, float]) -> None:
    vehicle = simulation.world.vehicle
    vehicle.update = _timed(spent, "vehicle update", vehicle.update)
    vehicle.state = _timed(spent, "vehicle state", vehicle.state)
    simulation.sensors.update = _timed(spent, "sensors", simulation.sensors.update)
    runner = simulation.runner
    if runner is not None:
        runner.call = _timed(spent, "user code", runner.call)
        runner.resume = _timed(spent, "user code", runner.resume)
    if simulation.log is not None:
        simulation.log.write = _timed(spent, "CSV log", simulation.log.write)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="simulated seconds per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of SEAR ticks and bare steps")
    args = parser.parse_args()
    ensure_demo_models(DEMO_DIR)
    with tempfile.TemporaryDirectory() as tmp:
        simulation = Simulation(Project.load(DEMO_DIR / "demo.prj"), seed=0, output=lambda text: None,
                                log_path=Path(tmp) / "bench.csv")
        simulation.start_user_code()
        simulation.run(2.0)  # warm up: settle, first sensor samples, user code running
        spent: dict[str, float] = defaultdict(float)
        _instrument(simulation, spent)
        client = simulation.world.client
        steps = round(args.seconds * simulation.physics_hz)
        ticks, bares, sear_wall, phases = [], [], 0.0, defaultdict(list)
        for _ in range(args.rounds):
            spent.clear()
            start = time.perf_counter()
            simulation.run(args.seconds)
            wall = time.perf_counter() - start
            sear_wall += wall
            ticks.append(wall / steps)
            for phase in PHASES:
                phases[phase].append(spent[phase] / steps)

            saved = p.saveState(physicsClientId=client)
            start = time.perf_counter()
            for _ in range(steps):
                p.stepSimulation(physicsClientId=client)
            bares.append((time.perf_counter() - start) / steps)
            p.restoreState(saved, physicsClientId=client)
            p.removeState(saved, physicsClientId=client)
        moved = simulation.sim.pose
        simulation.close()

    ratios = [t / b for t, b in zip(ticks, bares, strict=True)]
    bare = statistics.median(bares)
    tick = statistics.median(ticks)
    # The breakdown uses totals over all rounds (medians of parts do not add up to the median whole).
    total_ratio = sum(ticks) / sum(bares)
    shares = {phase: sum(v) / sum(bares) for phase, v in phases.items()}
    rest = total_ratio - 1.0 - sum(shares.values())
    loop_own = shares["user code"] + shares["CSV log"] + rest
    print(f"demo world, headless, demo user code running, CSV log on: {args.rounds} rounds of "
          f"{args.seconds:g} simulated s at {simulation.physics_hz:g} Hz (robot ended at x={moved.x:.1f} "
          f"y={moved.y:.1f} m)")
    print(f"  real-time factor of SEAR:                 {args.rounds * args.seconds / sear_wall:8.1f}x")
    print(f"  real-time factor of bare stepSimulation:  {1.0 / (bare * simulation.physics_hz):8.1f}x")
    print(f"  one tick: SEAR {tick * 1e6:.0f} us, bare stepSimulation {bare * 1e6:.0f} us (medians)")
    print(f"  SEAR tick / bare stepSimulation:          {statistics.median(ratios):8.2f}x   (target <= 1.3x; "
          f"rounds {min(ratios):.2f}..{max(ratios):.2f})")
    print(f"  where a tick goes, relative to one bare step (all rounds together: {total_ratio:.2f}x):")
    print(f"    pybullet step                           {1.0:8.2f}")
    for phase in PHASES:
        print(f"    {phase:40s}{shares[phase]:8.2f}")
    print(f"    loop bookkeeping (the rest)             {rest:8.2f}")
    print(f"  the loop's own cost (user code hand-over, log, bookkeeping): {loop_own:.2f} of a bare step; "
          f"physics (step + raycast vehicle) {1.0 + shares['vehicle update'] + shares['vehicle state']:.2f}, "
          f"sensors {shares['sensors']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
