"""A full SEAR simulator script, for when three hooks are not enough.

Run it with SEAR's Python: `python simulator_script.py path/to/project.prj [SEED]`. It builds the same
simulation `sear run` does (world, sensors, the project's user code, CSV log) and lets you drive the loop
yourself: change the world between ticks, watch ground truth the robot cannot see, stop on your own
conditions, collect statistics, or run batches with different seeds.

Units: metres, seconds, newtons, radians. `run()` advances the loop one physics step (1 / physics_hz
seconds, set in the project) at a time, sensors and user code at their own rates inside it, and calls
`after_tick` after every step with what the step did; it returns True to end the run early.
"""

import math
import sys
from pathlib import Path

from sear.project import Project
from sear.runtime.simulation import Simulation, TickResult

# --- settings of this script ------------------------------------------------------------------------
DURATION = 20.0          # simulated seconds to run
STUCK_AFTER = 5.0        # s without moving STUCK_DISTANCE counts as stuck and ends the run
STUCK_DISTANCE = 0.2     # m


def main(project_path: str, seed: int = 1) -> int:
    project = Project.load(project_path)
    log_path = Path(project_path).with_suffix(".csv")
    simulation = Simulation(project, seed=seed, log_path=log_path)   # same seed, same run
    try:
        # The world can be changed before (and between) ticks, beyond what init(sim) does.
        simulation.world.add_box(6.0, 3.0, size=0.5, mass=0.0)      # mass 0: immovable

        simulation.start_user_code()          # the project's own user code (init already ran)
        steps_per_second = round(project.simulation.physics_hz)
        sim = simulation.sim
        travelled = 0.0
        last = sim.pose
        last_progress = (sim.time, last)

        def after_tick(result: TickResult) -> bool:
            """The script's own bookkeeping after every physics step; True ends the run early."""
            nonlocal travelled, last, last_progress
            pose = sim.pose                   # ground truth, which the robot cannot see
            travelled += math.hypot(pose.x - last.x, pose.y - last.y)
            last = pose
            if simulation.steps % steps_per_second == 0:     # once a simulated second
                print(f"t={sim.time:5.1f} s  x={pose.x:6.2f} m  y={pose.y:6.2f} m  speed={sim.speed:4.2f} m/s")
            t0, p0 = last_progress
            if math.hypot(pose.x - p0.x, pose.y - p0.y) > STUCK_DISTANCE:
                last_progress = (sim.time, pose)
            elif sim.time - t0 > STUCK_AFTER:
                print(f"stuck since t={t0:.1f} s; ending the run early")
                return True
            return False

        # inputs -> vehicle -> physics step -> sensors -> user code -> log, DURATION simulated seconds
        simulation.run(DURATION, after_tick=after_tick)
        print(f"travelled {travelled:.2f} m in {sim.time:.2f} s; log: {log_path}")
    finally:
        simulation.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print("usage: python simulator_script.py PROJECT.prj [SEED]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 1))
