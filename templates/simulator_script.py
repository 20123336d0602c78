"""A full SEAR simulator script, for when three hooks are not enough.

Run it with the project's Python: `python simulator_script.py path/to/project.prj`. It builds the same
simulation `sear run` does and lets you drive the loop yourself: run several robots' worth of logic,
change the world between ticks, collect your own statistics, or run batches with different seeds.
"""

import sys
from pathlib import Path

from sear.project import Project
from sear.runtime import Simulation


def main(project_path: str) -> int:
    project = Project.load(project_path)
    simulation = Simulation(project, seed=1, log_path=Path(project_path).with_suffix(".csv"))
    try:
        simulation.world.add_box(4.0, 0.0, size=0.5, mass=0.0)
        simulation.start_user_code()          # the project's own user code, if it has any
        while simulation.world.time < 20.0:
            simulation.tick()                 # one physics step (sensors, user code, log)
            if simulation.steps % 240 == 0:  # once a simulated second
                pose = simulation.sim.pose
                print(f"t={simulation.world.time:5.1f} s  x={pose.x:6.2f} m  y={pose.y:6.2f} m")
    finally:
        simulation.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python simulator_script.py PROJECT.prj", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
