"""SEAR user code.

This file is a Python module that SEAR loads afresh every time you press Simulate (or run
`sear run PROJECT.prj`). Edit it in any editor.

- Module-level names are your user variables: they keep their values between calls.
- init(sim) runs once, before the first physics step: add obstacles here.
- main_loop(sim) runs every control tick (60 times a simulated second) once user code has started
  (press Space in the simulation window; headless runs start at once). It must return quickly: keep
  state in variables and decide what to do each tick.

Prefer ordinary loops? Delete init/main_loop and write run(sim) instead:

    def run(sim):
        sim.accelerate(20.0)
        sim.wait(2.0)                 # two simulated seconds pass
        while sim.step():             # one control tick per iteration
            if sim.read("front_ir") is not None:
                sim.brake(20.0)

The sim object (units: metres, seconds, newtons, radians):
    sim.time                          simulated seconds since the start
    sim.read(name)                    latest reading of a sensor (None until it has one)
    sim.sensor_names                  names of your sensors
    sim.accelerate(force)             engine force, N (negative reverses)
    sim.brake(force)                  brake force, N (0 releases)
    sim.steer(angle)                  steering angle, rad, positive = left
    sim.add_tree(x, y) / sim.add_box(x, y, size=1.0, mass=1.0) / sim.add_wall(x1, y1, x2, y2, height=1.0)
    sim.pose                          ground truth (x, y, z, roll, pitch, yaw), for debugging
    sim.speed                         ground-truth speed, m/s
    sim.print(...) or print(...)      a line in the console (stdout when headless)
    sim.step() / sim.wait(seconds)    run(sim) style only: next control tick / let time pass
An error in your code stops it and is shown with its file and line; the robot keeps its last inputs.
See docs/user-code.md for everything.
"""

# --- user variables -------------------------------------------------------------------------
target_speed = 1.0   # m/s


def init(sim):
    """Runs once before the first step."""
    sim.add_box(5.0, 0.0, size=0.5, mass=5.0)


def main_loop(sim):
    """Runs every control tick after user code starts."""
    if sim.speed < target_speed:
        sim.accelerate(20.0)
    else:
        sim.accelerate(0.0)
