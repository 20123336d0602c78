"""Every number of a sweep file is bounded and checked before anything runs, and a sweep's size is said
at once: a huge duration, a million steps or seeds are refused with the line and key (or, for a big sweep
confirmed with --yes, checked in a moment), never a traceback or minutes of silence."""

from __future__ import annotations

import io

import pytest

from sear.batch import parameters
from sear.batch.command import run_batch
from sear.batch.sweep import (
    CONFIRM_RUNS,
    MAX_DURATION,
    MAX_MEMORY_MB,
    MAX_RETRIES,
    MAX_RUNS,
    MAX_SEED,
    MAX_TIMEOUT,
    SweepError,
    load_sweep,
)
from sear.cli import main
from tests.batch.helpers import make_project, write_sweep

HEAD = 'project = "bot.prj"\n'


@pytest.fixture
def folder(tmp_path):
    make_project(tmp_path)
    return tmp_path


def _refused(folder, text: str, line: int, *words: str) -> str:
    path = write_sweep(folder, text)
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}"), message
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize(("setting", "bad", "good"), [
    ("duration", "1e300", repr(MAX_DURATION)),
    ("timeout", "1e300", repr(MAX_TIMEOUT)),
    ("memory_limit_mb", "1e300", repr(MAX_MEMORY_MB)),
    ("memory_limit_mb", "0.001", "64"),
    ("retries", "1000000000", str(MAX_RETRIES)),
    ("sampling_seed", "-1", str(MAX_SEED)),
    ("sampling_seed", str(MAX_SEED + 1), "0"),
])
def test_each_setting_has_a_stated_bound_and_its_bound_itself_is_accepted(folder, setting, bad, good):
    other = "" if setting == "duration" else "duration = 1.0\n"
    extra = 'sampling = "random"\nsamples = 2\n[vary]\ndynamics.mass = {min = 10, max = 20}\n' \
        if setting == "sampling_seed" else ""
    _refused(folder, HEAD + other + f"{setting} = {bad}\n" + extra, 3 if other else 2, setting)
    sweep = load_sweep(write_sweep(folder, HEAD + other + f"{setting} = {good}\n" + extra))
    assert sweep is not None


def test_a_huge_duration_is_refused_by_sear_batch_without_a_traceback(folder, capsys):
    path = write_sweep(folder, HEAD + "duration = 1e300\n")
    assert main(["batch", str(path), "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert f"{path}, line 2, field 'duration'" in err and f"at most {MAX_DURATION:g}" in err
    assert "Traceback" not in err and "OverflowError" not in err
    assert not (folder / "sweep-results").exists()


@pytest.mark.parametrize(("seeds", "words"), [
    ('"-5..3"', ['write a range as "FIRST..LAST"']),
    (f'"1..{MAX_SEED + 1}"', [f"from 0 to {MAX_SEED:,}"]),
    ("[1, -2]", ["seed -2", f"from 0 to {MAX_SEED:,}"]),
    (f"{MAX_SEED + 1}", [f"seed {MAX_SEED + 1}"]),
    (f'"1..{MAX_RUNS + 1}"', [f"{MAX_RUNS + 1:,} runs", f"at most {MAX_RUNS:,}"]),
])
def test_seeds_are_whole_numbers_a_run_accepts(folder, seeds, words):
    _refused(folder, HEAD + f"duration = 1.0\nseeds = {seeds}\n", 3, *words)
    # Positive control: the neighbours within the bounds load.
    assert load_sweep(write_sweep(folder, HEAD + f'duration = 1.0\nseeds = [0, {MAX_SEED}]\n')).seeds == [0, MAX_SEED]


def test_a_million_seeds_is_refused_unless_confirmed_and_its_size_is_said_at_once(folder):
    text = HEAD + 'duration = 1.0\nseeds = "1..1000000"\n'
    message = _refused(folder, text, 3, "1,000,000 runs", f"more than {CONFIRM_RUNS:,}", "--yes")
    assert "1,000,000 seeds" in message
    said: list[tuple[int, str]] = []
    sweep = load_sweep(write_sweep(folder, text), yes=True, on_size=lambda n, what: said.append((n, what)))
    assert said == [(1_000_000, "1 parameter set x 1,000,000 seeds")] and len(sweep.seeds) == 1_000_000
    # Positive control: CONFIRM_RUNS runs need no confirmation.
    assert len(load_sweep(write_sweep(folder, HEAD + f'duration = 1.0\nseeds = "1..{CONFIRM_RUNS}"\n')).seeds) \
        == CONFIRM_RUNS


def test_a_range_of_a_million_steps_is_refused_at_once_naming_its_line(folder, monkeypatch):
    checked: list[object] = []
    original = parameters.Targets.check
    monkeypatch.setattr(parameters.Targets, "check", lambda self, key, value, base: (
        checked.append(value), original(self, key, value, base))[1])
    text = HEAD + "duration = 1.0\n[vary]\ndynamics.mass = {min = 1, max = 100, steps = 1000000}\n"
    _refused(folder, text, 4, "field 'vary.dynamics.mass'", "1,000,000 runs", "--yes")
    assert checked == []  # refused before a single value was checked
    _refused(folder, text.replace("1000000", str(MAX_RUNS + 1)), 4, f"steps must be a whole number from 1 to "
             f"{MAX_RUNS:,}")


def test_a_long_grid_range_is_checked_by_its_ends_and_the_points_nearest_zero(folder, monkeypatch):
    checked: list[float] = []
    original = parameters.Targets.check
    monkeypatch.setattr(parameters.Targets, "check", lambda self, key, value, base: (
        checked.append(value), original(self, key, value, base))[1])
    steps = 50_001
    text = HEAD + f"duration = 1.0\n[vary]\ndynamics.mass = {{min = 1, max = 100, steps = {steps}}}\n"
    sweep = load_sweep(write_sweep(folder, text))
    assert len(sweep.runs()) == steps
    assert 2 <= len(checked) <= 5 and min(checked) == 1.0 and max(checked) == 100.0
    # The project refuses masses <= 0: a range through 0 is refused although both its ends are fine...
    crossing = text.replace("min = 1,", "min = -1,")
    _refused(folder, crossing, 4, "dynamics.mass")
    # ... and so is a range whose only bad point is one near 0 inside it: the project refuses numbers nearer 0
    # than 1e-100 but 0 itself (here the third of five points, 5e-102).
    near = HEAD + "duration = 1.0\n[vary]\nbody.start_north = {min = -1.5e-100, max = 1.6e-100, steps = 5}\n"
    _refused(folder, near, 4, "body.start_north")
    fine = near.replace("-1.5e-100", "-4e-100").replace("1.6e-100", "4e-100")  # -4, -2, 0, 2, 4 e-100: 0 itself is fine
    assert [r.params["body.start_north"] for r in load_sweep(write_sweep(folder, fine)).runs()][2] == 0.0


def test_a_range_too_wide_for_a_float_is_refused(folder):
    _refused(folder, HEAD + "duration = 1.0\n[vary]\ncode.SPEED = {min = -1e308, max = 1e308, steps = 3}\n", 4,
             "too far apart")
    assert load_sweep(write_sweep(folder, HEAD + "duration = 1.0\n[vary]\ncode.SPEED = {min = -1e300, max = 1e300, "
                                  "steps = 3}\n")).runs()[1].params["code.SPEED"] == 0.0


def test_random_samples_are_bounded(folder):
    body = 'duration = 1.0\nsampling = "random"\nsamples = {}\n[vary]\ndynamics.mass = {{min = 10, max = 20}}\n'
    _refused(folder, HEAD + body.format(10**12), 4, f"from 0 to {MAX_RUNS:,}")
    _refused(folder, HEAD + body.format(CONFIRM_RUNS + 1), 4, "--yes")
    assert load_sweep(write_sweep(folder, HEAD + body.format(CONFIRM_RUNS + 1)), yes=True).samples == CONFIRM_RUNS + 1


def test_sear_batch_says_the_size_before_it_checks_the_values(folder, capsys):
    """The size line comes first, even when a value is then refused; --yes lets a big sweep through."""
    path = write_sweep(folder, HEAD + 'duration = 1.0\nseeds = "1..200000"\n[vary]\ndynamics.mass = [20.0, -1.0]\n')
    stream = io.StringIO()
    with pytest.raises(SweepError, match="line 5"):
        run_batch(path, yes=True, stream=stream)
    assert stream.getvalue().splitlines() == [
        "sear batch: sweep.toml makes 400,000 runs (2 parameter sets x 200,000 seeds); checking its values."]
    assert main(["batch", str(path)]) == 1
    assert "--yes" in capsys.readouterr().err
    assert not (folder / "sweep-results").exists()


def test_the_help_of_yes_states_the_limit_the_sweep_applies(capsys):
    with pytest.raises(SystemExit):
        main(["batch", "--help"])
    assert f"more than {CONFIRM_RUNS:,} runs" in " ".join(capsys.readouterr().out.split())
