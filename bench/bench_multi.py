"""Many robots in one world: the headless real-time factor of 20 to 100 robots (issues 16 and 29).

    python bench/bench_multi.py [--robots 20] [--seconds 10] [--rounds 3] [--sensors example|lidar|demo]
                                [--kinds code,swarm,physics]

The world is the demo's (100 m x 100 m of hills, its terrain model) with N demo rovers on a grid 4 m
apart, every one a robot of its own with its own sensors, in lock-step. Sensors: `example` (default) those
of examples/two_robots_avoid (front sonar, front infrared, GPS, compass: a swarm robot's), `lidar` those
and the demo's LIDAR (181 rays at 10 Hz), `demo` the demo rover's full set (LIDAR, IMU, odometer... too).
Each round measures the kinds asked for, in an order that turns each round so that load from other work
slows them alike:

- `code`: every robot runs examples/two_robots_avoid/avoid.py (drive 10 m ahead, keep right of what
  the sonar sees) in its own process, as `sear run --headless` runs it, with a CSV log;
- `swarm`: the same, every robot's code in one process (<simulation><swarm>, issue 29);
- `physics`: the same world and sensors with no user code (the robots are driven from the benchmark at
  a constant throttle), to show what the controllers cost.

Loading and building the world are not timed, one simulated second of settling is not either. Printed:
simulated seconds per wall-clock second (median over the rounds, with the range), and the CPU real-time
factor, simulated seconds per CPU second of all the run's processes (the simulation's and its
controllers'), which says what the run costs whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two_robots_avoid"
SPACING = 4.0
"""m between the robots' start points."""


def make_project(folder: Path, robots: int, sensors: str, code: bool, swarm: bool = False):  # -> Project
    """The demo project copied into `folder` with `robots` robots on a grid around the centre."""
    from sear.project import Project
    from sear.resources import demo_project

    shutil.copytree(demo_project().parent, folder, dirs_exist_ok=True)
    shutil.copy(EXAMPLE / "avoid.py", folder / "avoid.py")
    shutil.copy(EXAMPLE / "sensors.xml", folder / "example_sensors.xml")
    project = Project.load(folder / demo_project().name)
    project.code.user_code = folder / "avoid.py" if code else None
    project.code.sensors = folder / ("sensors.xml" if sensors == "demo" else "example_sensors.xml")
    if sensors == "lidar":  # the example's sensors and the demo's LIDAR
        lidar = re.search(r"\s*<lidar .*?</lidar>", (folder / "sensors.xml").read_text(), re.S)
        assert lidar is not None
        example = folder / "example_sensors.xml"
        example.write_text(example.read_text().replace("</sear-sensors>", lidar.group(0) + "\n</sear-sensors>"))
    if swarm:
        project.simulation.swarm = True
    for robot in project.robots:
        # 100 controller processes on 2 busy cores: a turn can wait seconds for a core (a 5 s time-out ended
        # a process-per-robot run of 100 robots); a benchmark measures cost, not the time-out.
        robot.code.hook_timeout = 600.0
    project.robot_name = "r0"
    columns = max(5, math.ceil(math.sqrt(robots)))  # 100 robots: 10 x 10, all on the demo's 100 m terrain
    template = copy.deepcopy(project.robots[0])
    for index in range(robots):
        body = project.body if index == 0 else None
        if index:
            robot = copy.deepcopy(template)
            robot.name = f"r{index}"
            project.add_robot(robot)
            body = robot.body
        assert body is not None
        body.start_east = (index % columns - (columns - 1) / 2) * SPACING
        body.start_north = (index // columns) * SPACING - 6.0
    return project


def cpu_of(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes `pids` have used so far (Linux /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def measure(robots: int, sensors: str, kind: str, seconds: float) -> tuple[float, float, float]:
    """One run: simulated seconds per wall-clock second, and CPU seconds per simulated second of the
    simulation's own process and of all the controller processes together."""
    from sear.loading import load_project
    from sear.runtime.simulation import Simulation

    with tempfile.TemporaryDirectory() as folder:
        code = kind != "physics"
        project = make_project(Path(folder) / "world", robots, sensors, code, swarm=kind == "swarm")
        loaded = load_project(project)
        if code and not loaded.ok:
            raise SystemExit("\n".join(map(str, loaded.problems)))
        # Without user code a project does not validate (no file chosen): the bare project is simulated.
        simulation = Simulation(loaded if code else project, seed=3, log_path=Path(folder) / "a.csv",
                                output=lambda text: None)
        try:
            if code:
                simulation.start_user_code()
            else:
                for run in simulation.robots:
                    run.sim.accelerate(10.0)
            simulation.run(1.0)
            pids = [pid for run in simulation.robots if (pid := getattr(run.runner, "pid", None)) is not None]
            swarm_process = getattr(simulation, "swarm", None)
            if swarm_process is not None and swarm_process.pid is not None:
                pids.append(swarm_process.pid)
            start, cpu, controllers = time.perf_counter(), time.process_time(), cpu_of(pids)
            simulation.run(seconds)
            wall = time.perf_counter() - start
            cpu = time.process_time() - cpu
            controllers = cpu_of(pids) - controllers
            if simulation.user_error is not None:
                raise SystemExit(f"user code failed: {simulation.user_error}")
        finally:
            simulation.close()
    return seconds / wall, cpu / seconds, controllers / seconds


KINDS = {"code": "each robot's own controller process", "swarm": "one swarm controller process",
         "physics": "no user code"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sensors", choices=("example", "lidar", "demo"), default="example")
    parser.add_argument("--kinds", default="code,physics",
                        help="comma-separated: code, swarm, physics (default code,physics)")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {', '.join(KINDS)}")
    results: dict[str, list[tuple[float, float, float]]] = {kind: [] for kind in kinds}
    for round_ in range(args.rounds):
        shift = round_ % len(kinds)
        for kind in kinds[shift:] + kinds[:shift]:
            factor, cpu, controllers = measure(args.robots, args.sensors, kind, args.seconds)
            results[kind].append((factor, cpu, controllers))
            print(f"round {round_ + 1}: {kind:8s} {factor:5.2f}x real time; CPU s per simulated s: simulation "
                  f"{cpu:.2f}, controllers {controllers:.2f}; CPU real-time factor {1.0 / (cpu + controllers):.3f}",
                  flush=True)
    load = os.getloadavg()[0]
    print(f"\n{args.robots} robots, {args.sensors} sensors, {args.seconds:g} s simulated, {args.rounds} rounds "
          f"(median, range); load average {load:.1f} on {os.cpu_count()} CPUs:")
    for kind, rows in results.items():
        factors = [r[0] for r in rows]
        cpu = statistics.median(r[1] for r in rows)
        controllers = statistics.median(r[2] for r in rows)
        cpu_factors = [1.0 / (r[1] + r[2]) for r in rows]
        print(f"  {kind:8s} {statistics.median(factors):5.2f}x real time ({min(factors):.2f}-{max(factors):.2f}) - "
              f"{KINDS[kind]}; CPU s per simulated s: simulation {cpu:.2f}, controllers {controllers:.2f}; "
              f"CPU real-time factor {statistics.median(cpu_factors):.3f} ({min(cpu_factors):.3f}-"
              f"{max(cpu_factors):.3f})")
    coded = [kind for kind in ("swarm", "code") if kind in results]
    if coded:
        rows = results[coded[0]]
        target = statistics.median(1.0 / (r[1] + r[2]) for r in rows)
        print(f"target CPU real-time factor >= 1 with user code ({coded[0]}): {'met' if target >= 1.0 else 'NOT met'} "
              f"({target:.3f} measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
