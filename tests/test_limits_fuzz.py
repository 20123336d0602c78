"""Fuzzing the numbers of project and sensors files: `sear validate` OK means `sear run` starts and runs.

From the demo project, VARIANTS project files and VARIANTS sensors files are made by a seeded RNG, each
with one to three numeric fields (any the format declares, present in the demo or not) set to a hostile
or random number: literals that overflow to infinity (1e999, 1e400), denormals (4.9e-324, 1e-320), NaN,
INF, huge and tiny numbers, numbers just outside and inside the field's bounds, and random magnitudes
from 1e-330 to 1e330; sensors files also get copies of a sensor (many sensors at once). Every variant
goes through sear.loading.load_project, the code `sear validate` and `sear run` both start with: no
exception may escape it, and each refusal names the file (and a line, for a value in a file).

`make test-slow` (marker `slow`) validates all VARIANTS variants of each file from each of two seeds
(SEEDS). The default tier (`make test`) validates COVERING, the fixed subset of those variants that
reaches every branch of SEAR's code the 2 x VARIANTS variants reach (branch coverage of the `sear`
package in this process, computed by `python -m tests.covering limits`; rerun it when the validation
code changes).

Of the variants that validate, a few (RUNS; RUNS_SLOW under the `slow` marker) are run as `sear run
--headless --duration 1` in a subprocess: exit 0 (the demo's user code raises nothing), no traceback,
at most RUN_CPU_SECONDS of CPU time (the issue's 10 s for a 1-second run, counted as CPU time so a busy
machine cannot fail it; the process is killed after RUN_WALL_SECONDS of wall time) and at most
RUN_MAX_RSS of memory.
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
import resource
import subprocess
import sys
import time
import typing
from pathlib import Path

import pytest
from lxml import etree

from sear.fields import fields_of, strip_optional
from sear.loading import load_project
from sear.project import Project
from sear.sensors.registry import builtin_definitions

SEED = 20261123
SEEDS = ("", "-slow")
"""Suffixes of SEED: each makes VARIANTS variants of each file."""
VARIANTS = 1000
"""Variants of each file from each seed (the issue asks for at least 1,000)."""
COVERING: dict[str, dict[str, list[int]]] = {
    "project": {"": [0, 1, 4, 8, 27, 113, 574, 834], "-slow": [1, 6, 7, 51, 75, 148, 154, 596, 850]},
    "sensors": {"": [0, 1, 3, 11, 35, 58, 356, 563, 830], "-slow": [0, 1, 2, 3, 6, 23, 81, 265, 720]},
}
"""The variants (by file kind, then seed) the default tier validates: together they reach every branch
that all 2 x VARIANTS variants of the kind reach (`python -m tests.covering limits`)."""
RUNS, RUNS_SLOW = 1, 8
"""Variants of each file that validate and are then run: in the default tier, and under `make test-slow`.
Each run takes ~2 s of CPU time and 165 MB."""
RUN_CPU_SECONDS = 10.0
RUN_WALL_SECONDS = 120.0
RUN_MAX_RSS = 1 << 30
"""1 GB: the issue's bound for a 1-second run."""

HOSTILE = ("1e999", "-1e999", "1e400", "-1e400", "4.9e-324", "-4.9e-324", "1e-320", "2.2e-308", "1e-300",
           "1e-101", "1e300", "-1e300", "1.7976931348623157e308", "NaN", "nan", "INF", "-INF", "inf", "0", "-0",
           "-1", "1e9", "1000000001", "1e-9", "99999999999999999999", "0.00001", "1e-5", "3", "2.54", "1e6")


def _numeric_fields(cls: type) -> list[tuple[tuple[str, ...], typing.Any]]:
    """(element path, field info) of every number or list of numbers a dataclass holds, nested ones too."""
    out = []
    for info in fields_of(cls):
        tp = info.type
        if dataclasses.is_dataclass(tp):
            out += [((info.name, *path), sub) for path, sub in _numeric_fields(tp)]
        elif typing.get_origin(tp) is dict:
            item = typing.get_args(tp)[1]
            out += [((info.name, f"wheel[@id='{key}']", *path), sub)
                    for key in info.choices for path, sub in _numeric_fields(item)]
        elif info.is_number or (typing.get_origin(tp) is tuple and typing.get_args(tp)[:1] == (float,)):
            out.append(((info.name,), info))
    return out


def _value(rng: random.Random, info: typing.Any) -> str:
    """A hostile, random or bound-hugging number for a field."""
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(HOSTILE)
    if roll < 0.75:
        return f"{rng.choice(('', '-'))}{rng.uniform(1, 10):.4f}e{rng.randint(-330, 330)}"
    lo, hi, _exclusive, _meaning = info.bounds()
    edge = rng.choice((lo, hi))
    return repr(rng.choice((edge, edge * (1 + 1e-9) + 1e-12, edge * (1 - 1e-9) - 1e-12,
                            rng.uniform(max(lo, -1e3), min(hi, 1e3)))))


def _set(rng: random.Random, root: etree._Element, path: tuple[str, ...], text: str, info: typing.Any) -> None:
    """Set the element at `path` below `root` (made when absent) to `text`; a list field gets `text` as one
    of its numbers."""
    el = root
    for step in path:
        found = el.find(step)
        if found is None:
            if step.startswith("wheel["):
                found = etree.SubElement(el, "wheel", id=step.split("'")[1])
            else:
                found = etree.SubElement(el, step)
        el = found
    tp = strip_optional(info.type)[0]
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        count = 1 if args[-1] is Ellipsis else len(args)
        numbers = ["0"] * count if el.text is None or len(el.text.split()) != count else el.text.split()
        numbers[rng.randrange(count)] = text
        text = " ".join(numbers)
    el.text = text


def _project_variant(rng: random.Random, base: bytes) -> bytes:
    root = etree.fromstring(base)
    fields = _numeric_fields(Project)
    for _ in range(rng.randint(1, 3)):
        path, info = rng.choice(fields)
        _set(rng, root, path, _value(rng, info), info)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _sensors_variant(rng: random.Random, base: bytes) -> bytes:
    root = etree.fromstring(base)
    definitions = builtin_definitions()
    sensors = [el for el in root if isinstance(el.tag, str)]
    if rng.random() < 0.1:  # many sensors: copies of one, renamed
        original = rng.choice(sensors)
        for i in range(rng.choice((10, 30, 100))):
            copy = etree.fromstring(etree.tostring(original))
            copy.set("name", f"{original.get('name')}_{i}")
            root.append(copy)
    for _ in range(rng.randint(1, 3)):
        sensor = rng.choice(sensors)
        path, info = rng.choice(_numeric_fields(definitions[sensor.tag]))
        _set(rng, sensor, path, _value(rng, info), info)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def variants(folder: Path, kind: str, seed: str) -> list[tuple[Path, Path | None]]:
    """Write the VARIANTS variants of one file kind from one seed into `folder` (a copy of the demo):
    (project path, sensors path or None) for each, the same on every run."""
    rng = random.Random(f"{SEED}-{kind}{seed}")
    base_project = (folder / "demo.prj").read_bytes()
    base_sensors = (folder / "sensors.xml").read_bytes()
    out: list[tuple[Path, Path | None]] = []
    for i in range(VARIANTS):
        tag = f"{kind[0]}{seed}-{i}"
        if kind == "project":
            path = folder / f"{tag}.prj"
            path.write_bytes(_project_variant(rng, base_project))
            out.append((path, None))
        else:
            sensors_path = folder / f"{tag}.xml"
            sensors_path.write_bytes(_sensors_variant(rng, base_sensors))
            path = folder / f"{tag}.prj"
            path.write_bytes(base_project.replace(b"<sensors>sensors.xml</sensors>",
                                                  f"<sensors>{sensors_path.name}</sensors>".encode()))
            out.append((path, sensors_path))
    return out


def validate_one(path: Path, sensors_path: Path | None) -> bool:
    """Validate one variant as `sear validate` does: whether it validated; a refusal must name the file
    (and the line, for a value in the file) without a traceback."""
    try:
        loaded = load_project(path)
    except Exception as exc:  # what escapes load_project would be a traceback of `sear validate`
        pytest.fail(f"variant {path.name} ({(sensors_path or path).read_text()[:3000]}) raised {exc!r}")
    for problem in loaded.problems:
        text = str(problem)
        assert problem.file is not None, (path.name, text)
        assert "Traceback" not in text and "Error(" not in text, (path.name, text)
        if problem.file in (path, sensors_path) and "rays per simulated second" not in text:
            assert problem.line is not None, (path.name, text)  # a value in the file: its line
    return loaded.ok


def _validate_all(folder: Path, kind: str, chosen: dict[str, list[int]] | None = None) -> list[Path]:
    """Validate the variants of one file kind from every seed (`chosen`: only these variants of each
    seed); the paths of the projects that validated."""
    ok: list[Path] = []
    refused = 0
    for seed in SEEDS:
        made = variants(folder, kind, seed)
        for i in (range(len(made)) if chosen is None else chosen[seed]):
            if validate_one(*made[i]):
                ok.append(made[i][0])
            else:
                refused += 1
    # Both outcomes must occur, or the fuzzing tests nothing.
    count = refused + len(ok)
    assert refused > count // 10 and len(ok) > count // 20, (kind, refused, len(ok))
    return ok


_CHILD = ("import sys\nfrom sear.cli import main\nstatus = main(sys.argv[1:])\n"
          "sys.stderr.write(next(line for line in open('/proc/self/status') if line.startswith('VmHWM')))\n"
          "sys.exit(status)\n")
"""`sear` (sear.cli.main) that writes its peak RSS to stderr as it ends: VmHWM counts the memory of this
program only, where ru_maxrss would count the pages of the (large) test process it was forked from."""


def _run(project: Path) -> tuple[int, str, float, int]:
    """`sear run PROJECT --headless --duration 1`: exit status, stderr, CPU seconds and peak RSS (bytes)."""
    def limit() -> None:  # a runaway variant stops at 4 GB of address space rather than taking the machine
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    with open(project.with_suffix(".err"), "w+b") as err:
        process = subprocess.Popen([sys.executable, "-c", _CHILD, "run", str(project), "--headless",
                                    "--duration", "1"], stdout=subprocess.DEVNULL, stderr=err,
                                   preexec_fn=limit, cwd=project.parent)
        deadline = time.monotonic() + RUN_WALL_SECONDS
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    peak = re.search(r"VmHWM:\s*(\d+) kB", stderr)
    return process.returncode, stderr, usage.ru_utime + usage.ru_stime, int(peak[1]) * 1024 if peak else -1


def _check_runs(ok: list[Path], runs: int, seed: str) -> None:
    chosen = random.Random(seed).sample(ok, min(runs, len(ok)))
    assert chosen
    for project in chosen:
        status, stderr, cpu, rss = _run(project)
        what = f"{project.name}: status {status}, {cpu:.1f} s CPU, {rss / 1e6:.0f} MB\n{stderr[-2000:]}"
        assert status == 0 and "Traceback" not in stderr, what
        assert cpu <= RUN_CPU_SECONDS and 0 < rss <= RUN_MAX_RSS, what


@pytest.mark.parametrize("kind", ["project", "sensors"])
def test_fuzzed_numbers_validate_cleanly_and_what_validates_runs(demo_copy, kind):
    ok = _validate_all(demo_copy, kind, COVERING[kind])
    _check_runs(ok, RUNS, f"{SEED}-{kind}-runs")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["project", "sensors"])
def test_fuzzed_numbers_every_variant_and_more_runs(demo_copy, kind):
    ok = _validate_all(demo_copy, kind)
    _check_runs(ok, RUNS_SLOW, f"{SEED}-{kind}-slow-runs")


def test_the_fuzzer_makes_the_issues_literals(demo_copy):
    """Positive control of the generator: overflowing, denormal and NaN literals are among the variants,
    and each such variant is refused naming the file, line and field."""
    rng = random.Random(f"{SEED}-project")
    base = (demo_copy / "demo.prj").read_bytes()
    seen = set()
    for i in range(200):
        data = _project_variant(rng, base)
        for literal in ("1e999", "4.9e-324", "NaN"):
            if f">{literal}<".encode() in data:
                seen.add(literal)
                path = demo_copy / f"c{i}.prj"
                path.write_bytes(data)
                problems = load_project(path).problems
                assert any(p.file == path and p.line and p.detail for p in problems), problems
    assert seen == {"1e999", "4.9e-324", "NaN"}
