"""The running simulation, shared by the simulation window and headless runs, one job per module:

- simulation: `Simulation`, the loop (one tick: physics, sensors, controllers, log) and `TickResult`;
- robotrun: `RobotRun`, one robot of a run: its vehicle, sensors and controller;
- sim: `Sim`, the `sim` object the calls of a controller or a script act on, and `GridImage`;
- logs: the CSV log and the array outputs beside it (`CsvLog`, `load_arrays`, `check_log_path`);
- pacer: `Pacer`, keeping a run to the wall clock;
- stdstreams: standard output and error kept usable after a closed pipe or user code closing them.
"""
