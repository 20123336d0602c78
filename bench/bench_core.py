"""Core benchmark (issue 23): CPU real-time factors, rays per second against bare Embree, and start-up,
each interleaved against an older commit.

    python bench/bench_core.py [--baseline 6e0724a] [--rounds 3] [--peer-job DIR] [--quick] [--rows ...]

Rows (each measured on this tree and on the baseline, the two alternating in every round):

1. `demo`: the demo project, `sear run --headless --fast`;
2. `vlp16`: the demo with the wizard's Velodyne VLP-16 preset added (16 x 1,800 rays at 10 Hz);
3. `d435`: the demo with the RealSense D435 preset added (424 x 240 depth at 15 Hz);
4. `robots20`: 20 demo rovers each with its own user code process (as bench/bench_multi.py builds them);
5. `peer`: the peer job (its folder's README): SEAR on its project, and bare pybullet's racecar script
   (no SEAR code, so one run per round serves both trees), and SEAR's factor over bare pybullet's;
6. `rays`: SEAR's rays per second (SensorSuite.update with one LIDAR due, the scene of
   bench/bench_rays.py: a 79,202-triangle terrain, 200 fixed boxes, 2 movable ones) against bare
   `embreex` on that scene's terrain and boxes (the same rays, one call), at 1,000 and 28,800 rays;
7. `startup`: the CPU of `sear run` on the demo with `--duration 0.1` after a warm-up run.

The CPU real-time factor is simulated seconds per CPU second of the run's processes, start-up
excluded: rows 1-5 run in a child that loads the project as `sear run --headless --fast` does (its user
code started, no log), simulates 0.5 s to settle, then times `Simulation.run` over the row's seconds:
its own process time plus the CPU of every controller process (from /proc while they run). The wall
figure is the same run's simulated seconds per wall-clock second (it swings with the machine's load;
the CPU figure stays steady). Start-up is the CPU of a whole `sear run` (getrusage(RUSAGE_CHILDREN):
the simulation and its controller, both reaped). Every child runs on the same interpreter with
PYTHONPATH at the tree measured (the baseline: a temporary `git worktree`, removed afterwards; SEAR's
development install is kept out, so a module the baseline lacks is not taken from this tree), on the
same project files (copied from this tree into a temporary folder); compiled bytecode is kept in a
temporary folder, as an installed SEAR keeps it. Only public entry points are used (the `sear run`
command, sear.loading, Simulation, SensorSuite), so the same benchmark runs on older and newer code;
what a tree cannot do prints "n/a" and why. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = ("demo", "vlp16", "d435", "robots20", "peer", "rays", "startup")
TARGETS = {"demo": ">= 40", "vlp16": ">= 12", "d435": ">= 4", "robots20": ">= 4", "peer": ">= 2x bare",
           "rays": ">= 0.6x embreex", "startup": "<= 0.5 s CPU"}
SHORT = 0.1
"""Simulated seconds of the start-up run (`sear run --duration 0.1`)."""
USER_BLAS_THREADS = os.environ.get("OPENBLAS_NUM_THREADS")
"""OPENBLAS_NUM_THREADS as the user started the benchmark: importing sear here sets it to 1 (sear/__init__.py),
and the children must not inherit that, so each tree's runs get what that tree's own code sets."""
RAY_COUNTS = (1_000, 28_800)
"""Rays per call of the rays row: one 1,000-beam scan, and the VLP-16's 16 x 1,800."""


# --- project files -----------------------------------------------------------------------------------

def _preset_fields(model_prefix: str) -> tuple[str, dict]:
    """The sensor wizard's preset whose model number starts with `model_prefix`: its type and fields."""
    presets = json.loads((ROOT / "sear" / "data" / "sensor_presets.json").read_text(encoding="utf-8"))["presets"]
    preset = next(p for p in presets if p["model_number"].startswith(model_prefix))
    return preset["type"], dict(preset["fields"], model_number=preset["model_number"])


def _sensor(kind: str, name: str, fields: dict, z: float):  # -> SensorConfig
    """A sensor definition of type `kind` (its XML name) with `fields`, `z` m above the body's origin."""
    from sear.sensors.config import Pose
    from sear.sensors.registry import definitions

    values = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    return definitions()[kind](name=name, pose=Pose(z=z), **values)


def _demo_copy(folder: Path, extra: list | None = None) -> Path:
    """This tree's demo project copied into `folder`, with the sensors `extra` added; its .prj path."""
    from sear.sensors.files import load_sensors, sensors_to_xml

    shutil.copytree(ROOT / "assets" / "demo", folder)
    if extra:
        sensors = folder / "sensors.xml"
        sensors.write_bytes(sensors_to_xml(load_sensors(sensors) + extra))
    return folder / "demo.prj"


def make_projects(folder: Path, peer_job: Path | None) -> dict[str, Path]:
    """The .prj file of every `sear run` row, written under `folder`."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_multi import make_project  # the 20 robots as bench_multi builds them

    vlp_kind, vlp = _preset_fields("Velodyne VLP-16")
    d435_kind, d435 = _preset_fields("Intel RealSense D435")
    projects = {"demo": _demo_copy(folder / "demo"),
                "vlp16": _demo_copy(folder / "vlp16", [_sensor(vlp_kind, "vlp16", vlp, 0.25)]),
                "d435": _demo_copy(folder / "d435", [_sensor(d435_kind, "d435", d435, 0.2)])}
    robots = make_project(folder / "robots20", 20, "example", True)
    projects["robots20"] = robots.save(folder / "robots20" / "robots.prj")
    if peer_job is not None:
        shutil.copytree(peer_job / "sear-project", folder / "peer")
        projects["peer"] = folder / "peer" / "demo.prj"
    return projects


# --- measuring ---------------------------------------------------------------------------------------

def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _env(tree: Path, pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS")}
    if USER_BLAS_THREADS is not None:
        env["OPENBLAS_NUM_THREADS"] = USER_BLAS_THREADS
    return dict(env, PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(pycache), QT_QPA_PLATFORM="offscreen")


def timed(command: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Run `command`; its CPU seconds (every process of it that was reaped), wall seconds and output."""
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    cpu, wall = _children_cpu() - cpu, time.perf_counter() - wall
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return cpu, wall, done.stdout


_CLI = ("import runpy, sys; "
        "sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '__module__', '').startswith('__editable__')]; "
        "sys.argv[0] = 'sear'; runpy.run_module('sear', run_name='__main__', alter_sys=True)")
"""`python -m sear` importing SEAR only from PYTHONPATH's tree (see _only_this_tree)."""


def sear_run(tree: Path, pycache: Path, project: Path, seconds: float) -> tuple[float, float]:
    """CPU and wall seconds of `sear run PROJECT --headless --fast --duration SECONDS` on `tree`."""
    cpu, wall, _ = timed([sys.executable, "-c", _CLI, "run", str(project), "--headless", "--fast",
                          "--duration", f"{seconds:g}", "--seed", "3"], cwd=project.parent, env=_env(tree, pycache))
    return cpu, wall


def _only_this_tree() -> None:
    """(In a child.) Import SEAR only from PYTHONPATH's tree: without the development install's finder,
    a module the tree lacks fails to import instead of coming from another checkout."""
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]


def _load_project(path: Path):  # -> Loaded
    """The project loaded as `sear run` loads it (sear.loading now, sear.validate before)."""
    try:
        from sear.loading import load_project
    except ImportError:
        from sear.validate import load_project
    return load_project(path)


def _simulation_class():  # -> type[Simulation]
    """Simulation where the tree has it (sear.runtime.simulation now, sear.runtime before)."""
    try:
        from sear.runtime.simulation import Simulation
    except ImportError:
        from sear.runtime import Simulation
    return Simulation


def run_child(project: Path, seconds: float) -> None:
    """(In a child on the tree measured.) The project as `sear run --headless --fast` runs it (its user
    code started, no log), 0.5 s simulated to settle, then `seconds` timed: simulated seconds per CPU
    second of this process and every controller process (from /proc while they run), and per wall
    second; printed as JSON."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_multi import cpu_of  # the controllers' CPU, read as bench_multi reads it

    loaded = _load_project(project)
    if loaded.problems:
        raise SystemExit("; ".join(map(str, loaded.problems)))
    simulation = _simulation_class()(loaded, seed=3, output=lambda text: None)
    try:
        simulation.start_user_code()
        simulation.run(0.5)
        pids = [pid for run in simulation.robots if (pid := getattr(run.runner, "pid", None)) is not None]
        wall, cpu, controllers = time.perf_counter(), time.process_time(), cpu_of(pids)
        simulation.run(seconds)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        controllers = cpu_of(pids) - controllers
    finally:
        simulation.close()
    print(json.dumps({"cpu_rtf": seconds / (cpu + controllers), "wall_rtf": seconds / wall}))


def factors(tree: Path, pycache: Path, project: Path, seconds: float) -> dict[str, float]:
    """CPU and wall real-time factors of `project` on `tree`, start-up excluded (run_child)."""
    _, _, out = timed([sys.executable, str(Path(__file__).resolve()), "--run-child", str(project),
                       "--seconds", f"{seconds:g}"], cwd=project.parent, env=_env(tree, pycache))
    return {k: float(v) for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def bare_peer(peer_job: Path, pycache: Path, seconds: float) -> dict[str, float]:
    """The peer job's bare pybullet script: its own CPU real-time factor (it times itself, loading
    excluded), and its wall one."""
    script = peer_job / "bare_pybullet_racecar.py"
    _, _, out = timed([sys.executable, str(script), f"{seconds:g}", str(peer_job / "sear-project" / "terrain.obj")],
                      cwd=peer_job, env=_env(peer_job, pycache))
    result = json.loads(out.strip().splitlines()[-1])
    return {"cpu_rtf": float(result["cpu_rtf"]), "wall_rtf": float(result.get("rtf", result.get("wall_rtf", 0.0)))}


def bench_terrain(folder: Path) -> Path:
    """bench/bench_rays.py's terrain: a 200 x 200 vertex grid over 100 m x 100 m (79,202 triangles) of
    gentle hills, written as `folder`/terrain.obj (numpy only, so the same on every tree)."""
    import numpy as np

    n = 200
    xs = np.linspace(-50.0, 50.0, n)
    gx, gy = np.meshgrid(xs, xs)
    gz = 0.8 * np.sin(gx / 7.0) * np.cos(gy / 9.0) + 0.3 * np.sin(gx / 2.3 + gy / 3.1)
    gz -= gz[n // 2, n // 2]
    idx = np.arange(n * n).reshape(n, n) + 1
    faces = np.concatenate([
        np.column_stack([idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()]),
        np.column_stack([idx[:-1, :-1].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()])])
    path = folder / "terrain.obj"
    with open(path, "w") as file:
        points = np.column_stack([gx.ravel(), gy.ravel(), gz.ravel()]).tolist()
        file.writelines(f"v {x!r} {y!r} {z!r}\n" for x, y, z in points)
        file.writelines(f"f {a} {b} {c}\n" for a, b, c in faces)
    return path


def rays_child(repeats: int) -> None:
    """(In a child on the tree measured.) Rays per second of SEAR's SensorSuite and of bare embreex on
    the bench scene, at each of RAY_COUNTS rays per call; printed as JSON."""
    import numpy as np

    Simulation = _simulation_class()

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        prj = _demo_copy(base / "scene")
        bench_terrain(base / "scene")  # the bench terrain replaces the demo's (same file name)
        from sear.project import Project

        project = Project.load(prj)
        project.code.user_code = None
        for count in RAY_COUNTS:
            layers = 16 if count == 28_800 else 1
            beams = count // layers
            fields = {"angle_step_deg": 360.0 / beams, "spread_deg": 360.0, "max_range_m": 100.0,
                      "update_rate_hz": 10.0, "noise_stddev_mm": 0.0}
            if layers > 1:
                fields["layers_deg"] = [float(v) for v in np.linspace(-15.0, 15.0, layers)]
            from sear.sensors.files import sensors_to_xml

            sensors = base / "scene" / f"rays{count}.xml"
            sensors.write_bytes(sensors_to_xml([_sensor("lidar", "scan", fields, 0.25)]))
            project.code.sensors = sensors
            sim = Simulation(project, seed=3, output=lambda text: None)
            try:
                rng = np.random.default_rng(200)
                boxes = []
                while len(boxes) < 200:
                    x, y = rng.uniform(-45.0, 45.0, 2)
                    if abs(x) >= 3.0 or abs(y) >= 3.0:
                        size = float(rng.uniform(0.5, 2.0))
                        sim.sim.add_box(float(x), float(y), size=size, mass=0.0)
                        boxes.append((float(x), float(y), size))
                sim.sim.add_box(6.0, -4.0, size=0.8, mass=10.0)
                sim.sim.add_box(-5.0, 6.0, size=0.5, mass=2.0)
                sim.run(0.25)
                sear_t, bare_t = _scan_times(sim, base / "scene" / "terrain.obj", boxes, count, repeats)
                out[f"sear_{count}"] = count / sear_t
                out[f"embree_{count}"] = count / bare_t
            finally:
                sim.close()
    print(json.dumps(out))


def _scan_times(sim, terrain: Path, boxes: list[tuple[float, float, float]], count: int,
                repeats: int) -> tuple[float, float]:
    """CPU seconds of one sample of the LIDAR "scan" (`count` rays) through the first robot's
    SensorSuite, and of bare embreex casting the same rays on the scene's terrain and fixed boxes."""
    suite, state = sim.sensors, sim.robots[0].state
    scan = next(s for s in suite.sensors if s.name == "scan")
    starts, ends = scan.rays(state)
    if len(starts) != count:
        raise RuntimeError(f"the scan has {len(starts)} rays, not {count}")

    def sear_call() -> None:
        scan.next_sample = 0.0  # due now: update() samples it
        suite.update(state)

    sear_t, bare_t = _interleaved([sear_call, _bare_embree(terrain, boxes, starts, ends)], repeats)
    return sear_t, bare_t


def _bare_embree(terrain: Path, boxes: list[tuple[float, float, float]], starts, ends) -> Callable[[], None]:
    """One call of bare embreex casting the rays starts -> ends on the bench scene's terrain and fixed
    boxes (each box standing on the terrain's height under its centre)."""
    import numpy as np
    from embreex.mesh_construction import TriangleMesh
    from embreex.rtcore_scene import EmbreeScene

    lines = [line.split() for line in terrain.read_text().splitlines() if line[:2] in ("v ", "f ")]
    vertices = np.array([[float(v) for v in line[1:4]] for line in lines if line[0] == "v"])
    faces = np.array([[int(f.split("/")[0]) - 1 for f in line[1:4]] for line in lines if line[0] == "f"])
    unit = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    box_faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    all_v, all_f = [vertices], [faces]
    count = len(vertices)
    for x, y, size in boxes:
        ground = vertices[np.argmin((vertices[:, 0] - x) ** 2 + (vertices[:, 1] - y) ** 2), 2]
        all_v.append(unit * size + (x, y, ground + size / 2.0))
        all_f.append(box_faces + count)
        count += 8
    scene = EmbreeScene(robust=True)
    TriangleMesh(scene, np.concatenate(all_v).astype(np.float32), np.concatenate(all_f).astype(np.int32))
    origins = np.asarray(starts, dtype=np.float32)
    directions = np.asarray(ends, dtype=np.float32) - origins
    dists = np.ones(len(origins), dtype=np.float32)

    def call() -> None:
        scene.run(origins, directions, dists=dists, output=1)

    return call


def _interleaved(calls: list[Callable[[], None]], repeats: int) -> list[float]:
    """Median CPU seconds of each call, the calls alternating (after one warm-up call each)."""
    for call in calls:
        call()
    times: list[list[float]] = [[] for _ in calls]
    for i in range(repeats):
        order = list(range(len(calls)))[i % len(calls):] + list(range(len(calls)))[:i % len(calls)]
        for k in order:
            start = time.process_time()
            calls[k]()
            times[k].append(time.process_time() - start)
    return [statistics.median(t) for t in times]


def rays(tree: Path, pycache: Path, repeats: int) -> dict[str, float]:
    _, _, out = timed([sys.executable, str(Path(__file__).resolve()), "--rays-child", "--repeats", str(repeats)],
                      cwd=pycache.parent, env=_env(tree, pycache))
    return {k: float(v) for k, v in json.loads(out.strip().splitlines()[-1]).items()}


# --- the table -----------------------------------------------------------------------------------------

def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _fmt(value: float | None, spec: str = "7.2f") -> str:
    return "n/a".rjust(int(spec.split(".")[0])) if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="6e0724a", help="the older commit to compare with")
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="a folder holding the baseline's sources, instead of a worktree of --baseline")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer-job", type=Path, default=None,
                        help="the peer job's folder (its README, sear-project/, bare_pybullet_racecar.py)")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"which rows, comma-separated: {','.join(ROWS)}")
    parser.add_argument("--quick", action="store_true", help="1 round, short runs: checks that it runs")
    parser.add_argument("--rays-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=30, help=argparse.SUPPRESS)
    parser.add_argument("--run-child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_child is not None or args.rays_child:
        _only_this_tree()
    if args.run_child is not None:
        run_child(args.run_child, args.seconds)
        return 0
    if args.rays_child:
        rays_child(args.repeats)
        return 0
    rows = [r for r in args.rows.split(",") if r]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {','.join(ROWS)}")
    if "peer" in rows and args.peer_job is None:
        print("bench_core: no --peer-job folder given: the peer row is left out", file=sys.stderr)
        rows.remove("peer")
    rounds = 1 if args.quick else args.rounds
    seconds = ({"demo": 1.0, "vlp16": 0.5, "d435": 0.3, "robots20": 0.3, "peer": 1.0} if args.quick else
               {"demo": 10.0, "vlp16": 5.0, "d435": 2.0, "robots20": 3.0, "peer": 10.0})
    repeats = 3 if args.quick else args.repeats
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    failures: dict[tuple[str, str], str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-core-") as folder:
        base = Path(folder)
        projects = make_projects(base / "projects", args.peer_job)
        pycache = base / "pycache"
        trees = {"this": ROOT, "baseline": args.baseline_tree or base / "baseline"}
        if args.baseline_tree is None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(trees["baseline"]),
                            args.baseline], check=True)
        try:
            for tree in trees.values():  # warm-up: bytecode compiled, files in the page cache
                with contextlib.suppress(RuntimeError):  # the rows say what fails
                    sear_run(tree, pycache, projects["demo"], SHORT)
            for r in range(rounds):
                for row in rows:
                    names = list(trees) if r % 2 == 0 else list(trees)[::-1]
                    for name in names:
                        try:
                            if row == "rays":
                                value = rays(trees[name], pycache, repeats)
                            elif row == "startup":
                                value = {"startup_cpu": sear_run(trees[name], pycache, projects["demo"], SHORT)[0]}
                            else:
                                value = factors(trees[name], pycache, projects[row], seconds[row])
                            results.setdefault((row, name), []).append(value)
                        except Exception as exc:  # a tree that lacks something: n/a, and why
                            failures[(row, name)] = str(exc).splitlines()[-1][:200] if str(exc) else type(exc).__name__
                    if row == "peer":
                        assert args.peer_job is not None
                        results.setdefault(("peer", "bare"), []).append(bare_peer(args.peer_job, pycache, seconds[row]))
                print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
        finally:
            if args.baseline_tree is None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees["baseline"])],
                               check=False)

    def med(row: str, name: str, key: str) -> float | None:
        return _median([v[key] for v in results.get((row, name), []) if key in v])

    load = os.getloadavg()
    print(f"bench_core: this tree vs {args.baseline_tree or args.baseline}, {rounds} round(s) interleaved, medians; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(f"{'row':46s} {'this':>9s} {'baseline':>9s} {'ratio':>7s}   target (this)")
    labels = {"demo": "demo", "vlp16": "demo + VLP-16 preset", "d435": "demo + D435 preset (424x240, 15 Hz)",
              "robots20": "20 robots with user code", "peer": "peer job (SEAR)"}
    for row in rows:
        if row in labels:
            for key, what in (("cpu_rtf", "CPU RTF"), ("wall_rtf", "wall RTF")):
                this, old = med(row, "this", key), med(row, "baseline", key)
                ratio = this / old if this is not None and old else None
                target = TARGETS[row] if key == "cpu_rtf" and row != "peer" else ""
                print(f"{labels[row] + ', ' + what:46s} {_fmt(this, '9.2f')} {_fmt(old, '9.2f')} "
                      f"{_fmt(ratio, '7.2f')}   {target}")
        if row == "peer":
            bare_cpu, bare_wall = med("peer", "bare", "cpu_rtf"), med("peer", "bare", "wall_rtf")
            print(f"{'peer job, bare pybullet CPU RTF':46s} {_fmt(bare_cpu, '9.2f')}")
            for name in ("this", "baseline"):
                sear = med("peer", name, "cpu_rtf")
                ratio = sear / bare_cpu if sear is not None and bare_cpu else None
                print(f"{'peer job, SEAR / bare (' + name + ')':46s} {_fmt(ratio, '9.2f')}"
                      f"{'':20s}{TARGETS['peer'] if name == 'this' else ''}")
            if bare_wall:
                print(f"{'peer job, bare pybullet wall RTF':46s} {_fmt(bare_wall, '9.2f')}")
        if row == "rays":
            for count in RAY_COUNTS:
                for key, what in ((f"sear_{count}", f"SEAR M rays/s, {count:,} rays"),
                                  (f"embree_{count}", f"embreex M rays/s, {count:,} rays")):
                    this, old = med("rays", "this", key), med("rays", "baseline", key)
                    print(f"{what:46s} {_fmt(this and this / 1e6, '9.2f')} {_fmt(old and old / 1e6, '9.2f')}")
                share = [(med("rays", n, f"sear_{count}"), med("rays", n, f"embree_{count}"))
                         for n in ("this", "baseline")]
                ratios = [s / e if s is not None and e else None for s, e in share]
                print(f"{'SEAR / embreex, ' + format(count, ',') + ' rays':46s} {_fmt(ratios[0], '9.2f')} "
                      f"{_fmt(ratios[1], '9.2f')} {'':7s}   {TARGETS['rays']}")
        if row == "startup":
            this, old = med("startup", "this", "startup_cpu"), med("startup", "baseline", "startup_cpu")
            ratio = this / old if this is not None and old else None
            print(f"{'start-up, demo 0.1 s, CPU s':46s} {_fmt(this, '9.3f')} {_fmt(old, '9.3f')} "
                  f"{_fmt(ratio, '7.2f')}   {TARGETS['startup']}")
    for (row, name), why in sorted(failures.items()):
        print(f"n/a: {row} on {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
