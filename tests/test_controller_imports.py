"""A controller process loads numpy only when its user code does (or an array reaches it): importing
numpy is 0.15-0.2 s of CPU, most of a controller's start-up, and the demo's user code never needs it."""

from __future__ import annotations

import textwrap

import pytest

from sear.runtime.simulation import Simulation

from .physics.helpers import rover_project

_REPORT = """\
    import sys
    {imports}

    def init(sim):
        sim.print("numpy loaded:", "numpy" in sys.modules)

    def main_loop(sim):
        sim.accelerate(0.5)
    """


@pytest.mark.parametrize(("imports", "loaded"), [("", "False"), ("import numpy", "True")])
def test_the_controller_imports_numpy_only_when_user_code_does(tmp_path, imports, loaded):
    # "import numpy" in the user code is the positive control: the report does see numpy when it is there.
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(textwrap.dedent(_REPORT.format(imports=imports)))
    project.code.user_code = path
    printed: list[str] = []
    simulation = Simulation(project, output=printed.append)
    try:
        simulation.start_user_code()
        simulation.run(0.05)
        assert simulation.user_error is None
    finally:
        simulation.close()
    lines = [line for line in "".join(printed).splitlines() if line.startswith("numpy loaded:")]
    assert lines == [f"numpy loaded: {loaded}"]
