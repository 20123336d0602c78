"""A small project for batch tests: the new-project starter (flat ground, a box robot, a sonar, GPS and
compass) with user code whose behaviour module variables choose, and sweep files written beside it."""

from __future__ import annotations

from pathlib import Path

from sear.starter import create_new_project

USER_CODE = '''"""Batch test controller: drives ahead at SPEED; MODE makes a run fail in one way or another."""
import os
import signal
import time

SPEED = 1.0          # m/s
MODE = "ok"          # ok, crash_once, hang, oom, kill_once, wall, slow
MARKER = ""          # crash_once / kill_once fail only while the file MARKER.MODE does not exist
WALL_AT = 3.0        # m east of the start (MODE "wall")
ticks = 0


def init(sim):
    if MODE == "wall":
        sim.add_wall(WALL_AT, -3.0, WALL_AT, 3.0, height=1.0)
    if MODE == "oom":
        hoard = bytearray(1 << 46)   # 64 TiB: refused at once, as any allocation past the memory is
        print(len(hoard))
    marker = f"{MARKER}.{MODE}"
    if MODE == "crash_once" and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getppid(), signal.SIGSEGV)   # the run's process (the simulation) crashes
    if MODE == "kill_once" and not os.path.exists(marker):
        with open(marker + ".tmp", "w") as fh:
            fh.write(str(os.getppid()))         # the test kills the run's process with SIGKILL
        os.replace(marker + ".tmp", marker)


def main_loop(sim):
    global ticks
    ticks += 1
    if MODE == "hang":
        time.sleep(3600)
    if MODE in ("slow", "kill_once"):
        time.sleep(0.01)
    heading = sim.read("compass")
    sim.steer(0.0 if heading is None else max(-0.3, min(0.3, (90.0 - heading) * 0.01)))
    sim.accelerate(20.0 if sim.speed < SPEED else 0.0)


def result(sim):
    return {"ticks": ticks, "mode": MODE, "east": sim.pose.x}
'''


def make_project(folder: Path, *, hook_timeout: float = 3600.0) -> Path:
    """The batch test project in `folder` (its .prj path). The compass has noise, so runs with different
    seeds drive different paths; the hook time-out is long, so a hang is the batch's time-out to catch."""
    prj = folder / "bot.prj"
    project = create_new_project(prj)
    project.code.hook_timeout = hook_timeout
    project.save()
    (folder / "user_code.py").write_text(USER_CODE, encoding="utf-8")
    sensors = (folder / "sensors.xml").read_text(encoding="utf-8")
    (folder / "sensors.xml").write_text(sensors.replace('<compass name="compass">',
                                                        '<compass name="compass">\n    <noise>true</noise>'),
                                        encoding="utf-8")
    return prj


def write_sweep(folder: Path, text: str, name: str = "sweep.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path
