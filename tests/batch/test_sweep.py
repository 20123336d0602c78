"""The sweep file: its settings, paths, values and sampling, and one clear message per mistake."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from sear.batch.parameters import set_user_variables, user_variables
from sear.batch.sweep import SweepError, load_sweep
from tests.batch.helpers import make_project, write_sweep


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def line_of(text: str, fragment: str) -> int:
    """The line (1-based) of the sweep text holding `fragment`: worked out here, not by the reader."""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    assert len(lines) == 1, fragment
    return lines[0]


GRID = """project = "bot.prj"
duration = 2.5
timeout = 30
seeds = "3..5"

[vary]
dynamics.mass = [15.0, 20, 25.5]
"sensors.compass.accuracy_deg" = [0.5, 4.0]
code.SPEED = [0.5, 1.5]
start = [{north = 1.0, east = -2.0, yaw_deg = 90}, {north = 0, east = 0}]

[set]
simulation.control_hz = 30.0
"""


def test_a_grid_runs_every_combination_of_values_with_every_seed(project):
    sweep = load_sweep(write_sweep(project.parent, GRID))
    runs = sweep.runs()
    masses, accuracies, speeds = [15.0, 20.0, 25.5], [0.5, 4.0], [0.5, 1.5]
    starts = [{"north": 1.0, "east": -2.0, "yaw_deg": 90.0}, {"north": 0.0, "east": 0.0}]
    expected = [(m, a, s, st, seed) for m, a, s, st in itertools.product(masses, accuracies, speeds, starts)
                for seed in (3, 4, 5)]
    assert len(runs) == len(expected) == 72
    got = [(r.params["dynamics.mass"], r.params["sensors.compass.accuracy_deg"], r.params["code.SPEED"],
            r.params["start"], r.seed) for r in runs]
    assert got == expected
    assert all(r.params["simulation.control_hz"] == 30.0 for r in runs)
    assert [r.run_id for r in runs[:2]] == ["run-0000", "run-0001"] and len({r.run_id for r in runs}) == 72
    assert isinstance(runs[0].params["dynamics.mass"], float)  # 20 in the file is a mass in kg, a float
    assert sweep.duration == 2.5 and sweep.timeout == 30.0 and sweep.project == project.resolve()
    assert sweep.runs() == runs  # the same file gives the same runs (what --resume relies on)


def test_random_sampling_draws_within_the_ranges_and_repeats_with_its_seed(project):
    text = ('project = "bot.prj"\nduration = 1\nsampling = "random"\nsamples = 40\nsampling_seed = 7\nseeds = 1\n'
            '[vary]\ndynamics.mass = {min = 10.0, max = 30.0}\ncode.MODE = ["ok", "slow"]\n'
            'dynamics.friction_slip = {min = 1, max = 3, integer = true}\n')
    runs = load_sweep(write_sweep(project.parent, text)).runs()
    masses = [r.params["dynamics.mass"] for r in runs]
    assert len(runs) == 40 and all(10.0 <= m <= 30.0 for m in masses) and len(set(masses)) == 40
    assert {r.params["code.MODE"] for r in runs} == {"ok", "slow"}
    assert {r.params["dynamics.friction_slip"] for r in runs} == {1, 2, 3}
    assert load_sweep(write_sweep(project.parent, text, "again.toml")).runs() == runs
    other = load_sweep(write_sweep(project.parent, text.replace("sampling_seed = 7", "sampling_seed = 8"), "b.toml"))
    assert [r.params["dynamics.mass"] for r in other.runs()] != masses


def test_a_grid_range_with_steps_is_evenly_spaced(project):
    text = 'project = "bot.prj"\nduration = 1\n[vary]\ndynamics.mass = {min = 10, max = 20, steps = 5}\n'
    runs = load_sweep(write_sweep(project.parent, text)).runs()
    assert [r.params["dynamics.mass"] for r in runs] == pytest.approx([10.0, 12.5, 15.0, 17.5, 20.0])


@pytest.mark.parametrize(("body", "key_fragment", "words"), [
    ('[vary]\ndynamics.mas = [1.0, 2.0]\n', "dynamics.mas ", ["has no field 'dynamics.mas'",
                                                             "did you mean 'dynamics.mass'?"]),
    ('[vary]\ndynamics.mass = [20.0, -5.0]\n', "dynamics.mass", ["expected a number greater than 0", "-5.0"]),
    ('[vary]\ndynamics.drive_type = ["car", "tank"]\n', "drive_type", ["'tank' is not allowed", "car, skid"]),
    ('[vary]\nsensors.compas.noise = [true]\n', "compas", ["no sensor 'compas'", "did you mean 'compass'?"]),
    ('[vary]\nsensors.compass.noize = [true]\n', "noize", ["did you mean 'noise'?"]),
    ('[vary]\ncode.SPEEED = [1.0]\n', "SPEEED", ["no module variable 'SPEEED'", "did you mean 'SPEED'?"]),
    ('[vary]\ndynamics.mass = 20.0\n', "dynamics.mass", ["give a list of values", "[set]"]),
    ('[vary]\nstart = [{north = 1, up = 2}]\n', "start", ["a start pose is a table of north, east"]),
    ('[vary]\ndynamics.mass = {min = 30, max = 10}\n', "dynamics.mass", ["min (30) is above max (10)"]),
    ('[vary]\ndynamics.mass = {min = 10, max = 30}\n', "dynamics.mass", ["needs steps = N"]),
    ('[vary]\ncode.SPEED = [1.0]\n[set]\ncode.SPEED = 2.0\n', "code.SPEED = 2.0", ["both varied and set"]),
    ('seed = 4\n', "seed = 4", ["'seed' is not a sweep setting", "did you mean 'seeds'?"]),
    ('seeds = "9..2"\n', "seeds", ['write a range as "FIRST..LAST"']),
    ('sampling = "latin"\n', "sampling", ['sampling must be "grid" or "random"']),
    ('retry_on = ["crash", "sulk"]\n', "retry_on", ["retry_on must be a list of failure kinds"]),
    ('[vary]\ndynamics.mass = = 3\n', "dynamics.mass", ["not valid TOML: Invalid value"]),
])
def test_each_mistake_is_one_message_naming_the_line_and_key(project, body, key_fragment, words):
    text = 'project = "bot.prj"\nduration = 1.0\n' + body
    path = write_sweep(project.parent, text)
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line_of(text, key_fragment)}")
    for word in words:
        assert word in message, message
    assert "Traceback" not in message


def test_a_sweep_without_project_or_duration_says_what_to_add(project):
    with pytest.raises(SweepError, match=r'names no project; add e.g. project = "demo.prj"'):
        load_sweep(write_sweep(project.parent, "duration = 1\n"))
    with pytest.raises(SweepError, match=r"field .duration.: the sweep file sets no duration"):
        load_sweep(write_sweep(project.parent, 'project = "bot.prj"\n'))
    with pytest.raises(SweepError, match="the project cannot be read"):
        load_sweep(write_sweep(project.parent, 'project = "nothing.prj"\nduration = 1\n'))


def test_setting_user_variables_keeps_every_other_line_where_it_was():
    source = ('"""doc"""\nSPEED = 1.0  # m/s\nROUTE = [\n    (1, 2),\n    (3, 4),\n]\nNAME: str = "a"\n'
              'def f():\n    return SPEED\nboom = 1 / 0 if False else 2\n')
    assert user_variables_from(source) == {"SPEED": 2, "ROUTE": 3, "NAME": 7, "boom": 10}
    changed = set_user_variables(source, {"SPEED": 2.5, "ROUTE": [[0, 0]], "NAME": "b"})
    assert len(changed.splitlines()) == len(source.splitlines())
    for number, line in enumerate(source.splitlines()):
        if number not in (1, 2, 3, 4, 5, 6):
            assert changed.splitlines()[number] == line
    namespace: dict = {}
    exec(compile(changed, "x", "exec"), namespace)
    assert (namespace["SPEED"], namespace["ROUTE"], namespace["NAME"], namespace["f"]()) == (2.5, [[0, 0]], "b", 2.5)
    assert "# m/s" in changed.splitlines()[1]
    with pytest.raises(SweepError, match="no module variable 'MISSING'"):
        set_user_variables(source, {"MISSING": 1})
    assert math.isfinite(namespace["boom"])


def user_variables_from(source: str) -> dict[str, int]:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    try:
        return user_variables(Path(fh.name))
    finally:
        Path(fh.name).unlink()


def test_the_worked_example_of_the_docs_loads_and_its_mistake_reads_as_documented(tmp_path):
    """docs/batch.md: its sweep file makes the 36 runs it says on a copy of the demo, and the mistake it
    shows gives the message it shows."""
    import re

    from sear import resources

    doc = (Path(__file__).resolve().parents[2] / "docs" / "batch.md").read_text(encoding="utf-8")
    example = re.findall(r"```toml\n(.*?)```", doc, flags=re.S)[0]
    resources.copy_demo(tmp_path / "demo")
    runs = load_sweep(write_sweep(tmp_path, example, "demo-sweep.toml")).runs()
    assert len(runs) == 36 and {r.seed for r in runs} == {1, 2, 3}
    assert {r.params["code.CRUISE_SPEED"] for r in runs} == {1.5, 3.0}
    shown = re.search(r"\$ sear batch demo-sweep.toml\nsear: (demo-sweep.toml, .*)\n", doc).group(1)
    path = write_sweep(tmp_path, example.replace("dynamics.mass =", "dynamics.mas ="), "demo-sweep.toml")
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert str(caught.value) == str(tmp_path / shown)
