"""Simulation loop benchmark: the demo world headless, against bare pybullet in the same process.

    python bench/run_bench.py [--seconds 4] [--rounds 5]

Runs the demo project headless (vehicle, all demo sensors, the demo user code running, CSV log on) and
prints its real-time factor and the cost of one SEAR tick relative to bare pybullet doing the same
physics, measured in the same run. Every pybullet call of a timed SEAR round that touches the world
(stepSimulation, rayTestBatch, the vehicle's applyExternalForce/Torque and its pose and velocity
queries) is recorded, the world is put back to the round's start (saveState/restoreState) and the
calls are replayed bare, twice:

- bare stepSimulation of the same bodies: the steps with the same forces on the chassis (without them
  the chassis would drop onto the terrain, and its contacts would change what a step costs);
- the same pybullet work done bare: every recorded call, the rays of the raycast vehicle and of the
  sensors included. Its ratio is SEAR's own overhead: what the Python loop, the vehicle model and the
  sensor models cost on top of the physics engine's work. This is the target's ratio.

The recorders' own cost (measured by replaying the same calls through them) is taken off SEAR's time,
and printed. SEAR rounds and bare replays alternate, so a machine shared with other work slows both
alike; the median over rounds is the result. Ratios, not timings, hold across machines.

One extra round before the timed ones says where a tick goes, each phase timed in place by a thin
wrapper (~1 us per call, counted in "the rest"): the pybullet step, the raycast vehicle (our stand-in
for Bullet's btRaycastVehicle, which pybullet's Python API lacks: suspension rays and tyre forces every
step), the vehicle state handed to sensors, the sensors (their ray casts shown apart), the user code
(the round trip to its process and back included) and the CSV log; the rest is the loop's own
bookkeeping.
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

from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402

PHASES = ("pybullet step", "vehicle update", "vehicle state", "sensors", "  of which ray casts", "user code",
          "CSV log")
TARGET = 1.3


def _timed(spent: dict[str, float], phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[phase] += time.perf_counter() - start

    return wrapper


WORLD_CALLS = ("stepSimulation", "rayTestBatch", "applyExternalForce", "applyExternalTorque",
               "getBasePositionAndOrientation", "getBaseVelocity")
"""The pybullet functions SEAR calls on every tick that do the physics engine's work."""
PHYSICS_ONLY = ("stepSimulation", "applyExternalForce", "applyExternalTorque")


def _recorder(fn: Callable[..., Any], calls: list) -> Callable[..., Any]:
    def recorder(*args: Any, **kwargs: Any) -> Any:
        calls.append((fn, args, kwargs))
        return fn(*args, **kwargs)

    recorder.__name__ = fn.__name__
    return recorder


def _recording(calls: list[tuple[Callable[..., Any], tuple, dict]]) -> list[tuple[Any, str, Any]]:
    """Swap the WORLD_CALLS, in the pybullet module and wherever SEAR's modules keep them under names of
    their own, for recorders appending (function, args, kwargs) to `calls`; returns what was swapped,
    for _restore."""
    originals = {getattr(p, name): _recorder(getattr(p, name), calls) for name in WORLD_CALLS}
    swapped = []
    for module in [p, *(m for name, m in sys.modules.items() if name.startswith("sear."))]:
        for attr, value in list(vars(module).items()):
            if callable(value) and value in originals:
                swapped.append((module, attr, value))
                setattr(module, attr, originals[value])
    return swapped


def _restore(swapped: list[tuple[Any, str, Any]]) -> None:
    for module, attr, value in swapped:
        setattr(module, attr, value)


def _replay(client: int, calls: list[tuple[Callable[..., Any], tuple, dict]], saved: int) -> float:
    """Seconds to make `calls` bare from physics state `saved`."""
    p.restoreState(saved, physicsClientId=client)
    start = time.perf_counter()
    for fn, args, kwargs in calls:
        fn(*args, **kwargs)
    return time.perf_counter() - start


def _breakdown_round(simulation: Simulation, seconds: float) -> tuple[dict[str, float], float]:
    """One instrumented round: time per phase (s, totals) and wall time (s)."""
    spent: dict[str, float] = defaultdict(float)
    steps = round(seconds * simulation.physics_hz)
    vehicle, sensors, runner, log = (simulation.world.vehicles[0], simulation.sensors, simulation.runner,
                                     simulation.log)
    saved = {(vehicle, "update"): vehicle.update, (vehicle, "state"): vehicle.state,
             (sensors, "update"): sensors.update, (sensors.caster, "cast"): sensors.caster.cast}
    vehicle.update = _timed(spent, "vehicle update", vehicle.update)
    vehicle.state = _timed(spent, "vehicle state", vehicle.state)
    sensors.update = _timed(spent, "sensors", sensors.update)
    sensors.caster.cast = _timed(spent, "  of which ray casts", sensors.caster.cast)
    if runner is not None:
        saved[(runner, "give_turn")], saved[(runner, "finish_turn")] = runner.give_turn, runner.finish_turn
        runner.give_turn = _timed(spent, "user code", runner.give_turn)  # type: ignore[method-assign]
        runner.finish_turn = _timed(spent, "user code", runner.finish_turn)  # type: ignore[method-assign]
    if log is not None:
        saved[(log, "write")] = log.write
        log.write = _timed(spent, "CSV log", log.write)
    step_simulation = p.stepSimulation
    p.stepSimulation = _timed(spent, "pybullet step", step_simulation)
    try:
        start = time.perf_counter()
        for _ in range(steps):
            simulation.tick()
        wall = time.perf_counter() - start
    finally:
        p.stepSimulation = step_simulation
        for owner, name in saved:
            delattr(owner, name)  # the wrapper was an instance attribute over the class's method
    return spent, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="simulated seconds per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of SEAR ticks and bare steps")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        simulation = Simulation(Project.load(demo_project()), seed=0, output=lambda text: None,
                                log_path=Path(tmp) / "bench.csv")
        simulation.start_user_code()
        simulation.run(2.0)  # warm up: settle, first sensor samples, user code running
        client = simulation.world.client
        steps = round(args.seconds * simulation.physics_hz)
        spent, breakdown_wall = _breakdown_round(simulation, args.seconds)
        ticks, bares, bare_works, recorder_costs, sear_wall, rays = [], [], [], [], 0.0, 0
        for _ in range(args.rounds):
            begin = p.saveState(physicsClientId=client)
            calls: list[tuple[Callable[..., Any], tuple, dict]] = []
            originals = _recording(calls)
            try:
                start = time.perf_counter()
                simulation.run(args.seconds)
                wall = time.perf_counter() - start
            finally:
                _restore(originals)
            sear_wall += wall
            ticks.append(wall / steps)
            end = p.saveState(physicsClientId=client)
            physics = [c for c in calls if c[0].__name__ in PHYSICS_ONLY]
            bares.append(_replay(client, physics, begin) / steps)
            work = _replay(client, calls, begin)
            bare_works.append(work / steps)
            # What the recorders cost SEAR: the same calls made through recorders, less made bare.
            through = [(_recorder(fn, []), args, kwargs) for fn, args, kwargs in calls]
            recording = max(0.0, _replay(client, through, begin) - work)
            recorder_costs.append(recording / steps)
            ticks[-1] -= recording / steps
            rays = sum(len(c[1][0]) for c in calls if c[0].__name__ == "rayTestBatch")
            p.restoreState(end, physicsClientId=client)
            for state in (begin, end):
                p.removeState(state, physicsClientId=client)
        moved = simulation.sim.pose
        simulation.close()

    step_ratios = [t / b for t, b in zip(ticks, bares, strict=True)]
    work_ratios = [t / b for t, b in zip(ticks, bare_works, strict=True)]
    tick, bare, bare_work = statistics.median(ticks), statistics.median(bares), statistics.median(bare_works)
    step_ratio, work_ratio = statistics.median(step_ratios), statistics.median(work_ratios)
    print(f"demo world, headless, demo user code running, CSV log on: {args.rounds} rounds of "
          f"{args.seconds:g} simulated s at {simulation.physics_hz:g} Hz (robot ended at x={moved.x:.1f} "
          f"y={moved.y:.1f} m)")
    print(f"  real-time factor of SEAR:                  {args.rounds * args.seconds / sear_wall:8.1f}x")
    print(f"  real-time factor of bare stepSimulation:   {1.0 / (bare * simulation.physics_hz):8.1f}x")
    print(f"  one tick (medians): SEAR {tick * 1e6:.0f} us; bare stepSimulation {bare * 1e6:.0f} us; "
          f"bare stepSimulation + the same rays ({rays / steps:.0f} per step) {bare_work * 1e6:.0f} us")
    print(f"  recorders' cost taken off SEAR's tick:     {statistics.median(recorder_costs) * 1e6:8.1f} us")
    print(f"  SEAR tick / bare stepSimulation:           {step_ratio:8.2f}x   (overhead {step_ratio - 1:.2f}x "
          f"of a bare step; rounds {min(step_ratios):.2f}..{max(step_ratios):.2f})")
    print(f"  SEAR tick / the same pybullet work bare:   {work_ratio:8.2f}x   (target <= {TARGET}x; "
          f"rounds {min(work_ratios):.2f}..{max(work_ratios):.2f})")
    print(f"  where an instrumented tick goes ({breakdown_wall / steps * 1e6:.0f} us), relative to one bare step:")
    shares = {phase: spent[phase] / steps / bare for phase in PHASES}
    rest = breakdown_wall / steps / bare - sum(v for k, v in shares.items() if not k.startswith(" "))
    for phase in PHASES:
        print(f"    {phase:40s}{shares[phase]:8.2f}")
    print(f"    loop bookkeeping and timers (the rest)  {rest:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
