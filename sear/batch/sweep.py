"""The sweep file: which project, what varies, how runs are sampled, and how long each may take.

A sweep file is TOML (read with the standard library's tomllib). Top-level keys set up the batch; the
table [vary] lists what varies, by dotted path, each a list of values or a range; [set] fixes values for
every run. Paths name project fields (`dynamics.mass`), sensor fields by sensor name
(`sensors.front_ir.noise`), module-level variables of the user code (`code.TARGET_SPEED`) and start poses
(`start`). docs/batch.md is the reference; every mistake is refused here, before any run starts, with
the sweep file's line and key and, for a path that names nothing, the nearest one that does.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import math
import random
import re
import tomllib
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sear.batch.parameters import SweepError, Targets
from sear.errors import SearError
from sear.models.filecheck import path_too_long
from sear.project import Project

FAILURE_KINDS = ("error", "crash", "timeout", "oom", "killed")
"""What a failed run's status can be (docs/batch.md "Statuses")."""
DEFAULT_RETRY_ON = ("crash", "timeout", "oom", "killed")
"""Failures retried by default: those a second attempt may not repeat. A Python error in the user code
('error') comes back the same with the same seed, so it is not retried unless the sweep asks."""
RANGE_KEYS = frozenset({"min", "max", "steps", "integer"})
TOP_KEYS = ("project", "duration", "timeout", "seeds", "sampling", "samples", "sampling_seed", "retries",
            "retry_on", "keep_logs", "memory_limit_mb", "output", "vary", "set")
MAX_RUNS = 1_000_000
"""The most runs a sweep may make, even with --yes: past it the run list, the manifest and the results table
alone take gigabytes."""
CONFIRM_RUNS = 100_000
"""A sweep of more runs than this is refused unless confirmed (`sear batch --yes`): days of computing on a
desktop, most likely a range with a digit too many."""
MAX_DURATION = 1e6
"""Simulated seconds a run may last at most (11.6 days; at the demo's real-time factor, about a day of
computing per run)."""
MAX_TIMEOUT = 1e7
"""Wall-clock seconds a run's time-out may be at most (116 days): the default, 10 x duration, stays below it,
and so does what a thread can wait for (a wait past about 9e9 s overflows)."""
MAX_SEED = 2**32 - 1
"""Seeds (and sampling_seed) are whole numbers from 0 to this: numpy's generators refuse negative seeds, and
the controller protocol carries at most 64-bit numbers."""
MAX_RETRIES = 100
"""How often a failed run may be tried again at most."""
MIN_MEMORY_MB, MAX_MEMORY_MB = 64.0, 1e7
"""memory_limit_mb's bounds: below 64 MB no run starts (Python and pybullet alone need more); 1e7 MB (10 TB) is
far above any machine and within what the system's limit can hold."""


@dataclass(frozen=True)
class Parameter:
    """One varied path: its values (grid or a random choice among them) or a range."""

    path: str
    line: int | None
    values: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    steps: int | None = None
    integer: bool = False

    def grid_values(self) -> tuple[Any, ...]:
        if self.values:
            return self.values
        assert self.low is not None and self.high is not None and self.steps is not None
        if self.steps == 1:
            return (self.low,)
        step = (self.high - self.low) / (self.steps - 1)
        points = [self.low + i * step for i in range(self.steps)]
        return tuple(round(p) for p in points) if self.integer else tuple(points)

    def probes(self) -> tuple[Any, ...]:
        """The values of a range that stand for all of it when its values are checked: its ends and, on a grid,
        the points nearest 0 (the project refuses numbers nearer 0 than 1e-100 but 0 itself). Every bound
        the project and sensors set on a number is an interval, so a range whose ends pass passes whole;
        checking each of a million steps took minutes."""
        assert self.low is not None and self.high is not None
        if self.steps is None:
            return (int(self.low), int(self.high)) if self.integer else (self.low, self.high)
        if self.steps <= 4:
            return self.grid_values()
        step = (self.high - self.low) / (self.steps - 1)
        middle = min(max(round(-self.low / step), 0), self.steps - 1) if step > 0 else 0
        indices = sorted({0, self.steps - 1, *(i for i in (middle - 1, middle, middle + 1) if 0 <= i < self.steps)})
        points = [self.low + i * step for i in indices]
        return tuple(round(p) for p in points) if self.integer else tuple(points)

    def draw(self, rng: random.Random) -> Any:
        if self.values:
            return self.values[rng.randrange(len(self.values))]
        assert self.low is not None and self.high is not None
        if self.integer:
            return rng.randint(int(self.low), int(self.high))
        return rng.uniform(self.low, self.high)


@dataclass(frozen=True)
class RunSpec:
    """One run of a batch: its id, seed and parameter values (by path)."""

    run_id: str
    index: int
    seed: int
    params: dict[str, Any]


@dataclass
class Sweep:
    """A sweep file read and checked."""

    path: Path
    text: str
    project: Path
    duration: float
    timeout: float
    seeds: list[int]
    sampling: Literal["grid", "random"] = "grid"
    samples: int = 0
    sampling_seed: int = 0
    retries: int = 1
    retry_on: tuple[str, ...] = DEFAULT_RETRY_ON
    keep_logs: bool = True
    memory_limit_mb: float | None = None
    output: Path = field(default_factory=Path)
    parameters: list[Parameter] = field(default_factory=list)
    fixed: dict[str, Any] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def runs(self) -> list[RunSpec]:
        """Every run, in a fixed order (parameter sets, then seeds): the same file gives the same runs
        with the same ids, which --resume and --rerun rely on."""
        if self.sampling == "grid":
            combos: Iterable[tuple[Any, ...]] = itertools.product(*(p.grid_values() for p in self.parameters))
        else:
            rng = random.Random(self.sampling_seed)
            combos = [tuple(p.draw(rng) for p in self.parameters) for _ in range(self.samples)]
        sets = [dict(zip((p.path for p in self.parameters), combo, strict=True)) for combo in combos]
        total = len(sets) * len(self.seeds)
        width = max(4, len(str(total - 1)))
        runs: list[RunSpec] = []
        for values in sets:
            for seed in self.seeds:
                index = len(runs)
                runs.append(RunSpec(f"run-{index:0{width}d}", index, seed, {**self.fixed, **values}))
        return runs


# --- reading -----------------------------------------------------------------------------------------

_KEY_PART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_KEY_LINE = re.compile(rf"^\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=")
_TABLE_LINE = re.compile(rf"^\s*\[\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*\]")


def _parts(key: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(_KEY_PART, key)]


def key_lines(text: str) -> dict[str, int]:
    """Line (1-based) of every key the file sets, by its dotted path from the top (a table's keys
    prefixed with the table's name): tomllib gives no line numbers, and messages must name one."""
    lines: dict[str, int] = {}
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        header = _TABLE_LINE.match(line)
        if header:
            table = _parts(header.group(1))
            lines.setdefault(".".join(table), number)
            continue
        key = _KEY_LINE.match(line)
        if key:
            lines.setdefault(".".join([*table, *_parts(key.group(1))]), number)
    return lines


def _flatten(table: dict[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    """(dotted path, value) of a [vary] or [set] table: nested tables are path segments, except a
    range ({min, max, ...}) and a start pose, which are values."""
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and path != "start" and not (value and set(value) <= RANGE_KEYS):
            yield from _flatten(value, f"{path}.")
        else:
            yield path, value


def load_sweep(path: str | Path, *, yes: bool = False,
               on_size: Callable[[int, str], None] | None = None) -> Sweep:
    """Read and check a sweep file: SweepError naming the line and key of the first mistake. The
    project, its sensors file and user code are read to check every path and value. A sweep of more than
    CONFIRM_RUNS runs is refused unless `yes`; `on_size` is told the number of runs (and what makes it) as
    soon as it is known, before the values are checked."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SweepError(f"the sweep file cannot be read ({exc.strerror}).", file=path) from None
    except UnicodeDecodeError:
        raise SweepError("the sweep file is not UTF-8 text; save it as UTF-8.", file=path) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = int(match.group(1)) if match else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "not valid TOML"
        raise SweepError(f"not valid TOML: {reason} (see docs/batch.md for the format).", file=path,
                         line=line) from None
    return SweepReader(path, text, data, yes=yes, on_size=on_size).read()


class SweepReader:
    """The state of reading one sweep file: its text's key lines, for messages."""

    def __init__(self, path: Path, text: str, data: dict[str, Any], *, yes: bool = False,
                 on_size: Callable[[int, str], None] | None = None) -> None:
        self.path = path
        self.yes = yes
        self.on_size = on_size
        self.text = text
        self.data = data
        self.lines = key_lines(text)
        self.base = path.absolute().parent

    def fail(self, key: str, message: str) -> typing.NoReturn:
        line = self.lines.get(key)
        if line is None:  # a key inside an inline table: the line of the table that holds it
            parts = key.split(".")
            while parts and line is None:
                parts.pop()
                line = self.lines.get(".".join(parts))
        raise SweepError(message, file=self.path, line=line, field=key)

    def number(self, key: str, default: float | None, *, maximum: float, minimum: float = 0.0) -> float | None:
        """The number `key` sets (`default` when it is not there): finite, above `minimum` (0) or at least
        it (when above 0), and at most `maximum`."""
        value = self.data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(key, f"{key} must be a number, not {value!r}.")
        if value <= 0 or value < minimum or value > maximum:
            low = f"at least {minimum:g}" if minimum > 0 else "greater than 0"
            self.fail(key, f"{key} must be {low} and at most {maximum:g}, not {value!r}.")
        return float(value)

    def integer(self, key: str, default: int, *, minimum: int = 0, maximum: int) -> int:
        """The whole number `key` sets (`default` when it is not there), from `minimum` to `maximum`."""
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            self.fail(key, f"{key} must be a whole number from {minimum} to {maximum:,}, not {value!r}.")
        return value

    def read(self) -> Sweep:
        data = self.data
        for key in data:
            if key not in TOP_KEYS:
                hint = difflib.get_close_matches(key, TOP_KEYS, n=1)
                self.fail(key, f"{key!r} is not a sweep setting" + (f"; did you mean {hint[0]!r}?" if hint else
                          f" (the settings are {', '.join(TOP_KEYS)}); varied fields go under [vary]."))
        if "project" not in data:
            raise SweepError("the sweep file names no project; add e.g. project = \"demo.prj\" (relative to "
                             "the sweep file).", file=self.path, field="project")
        if not isinstance(data["project"], str):
            self.fail("project", "project must be the path of a .prj file, in quotes.")
        project_path = (self.base / data["project"]).resolve()
        try:
            project = Project.load(project_path)
        except SearError as exc:
            self.fail("project", f"the project cannot be read: {exc}")
        duration = self.number("duration", None, maximum=MAX_DURATION)
        if duration is None:
            self.fail("duration", "the sweep file sets no duration; add e.g. duration = 10.0 (simulated seconds "
                      "per run).")
        timeout = self.number("timeout", max(60.0, 10.0 * duration), maximum=MAX_TIMEOUT)
        assert timeout is not None
        sampling = data.get("sampling", "grid")
        if sampling not in ("grid", "random"):
            self.fail("sampling", f"sampling must be \"grid\" or \"random\", not {sampling!r}.")
        samples = self.integer("samples", 0, minimum=0, maximum=MAX_RUNS)
        if sampling == "random" and samples < 1:
            self.fail("samples" if "samples" in data else "sampling",
                      "random sampling needs samples = N (how many parameter sets to draw).")
        if sampling == "grid" and "samples" in data:
            self.fail("samples", "samples applies to sampling = \"random\" only; a grid runs every combination.")
        retry_on = data.get("retry_on", list(DEFAULT_RETRY_ON))
        if not isinstance(retry_on, list) or any(kind not in FAILURE_KINDS for kind in retry_on):
            self.fail("retry_on", f"retry_on must be a list of failure kinds from {', '.join(FAILURE_KINDS)}.")
        keep_logs = data.get("keep_logs", True)
        if not isinstance(keep_logs, bool):
            self.fail("keep_logs", "keep_logs must be true or false.")
        output = data.get("output", f"{self.path.stem}-results")
        if not isinstance(output, str) or not output.strip():
            self.fail("output", "output must be a folder name, in quotes.")
        too_long = path_too_long(self.base / output)
        if too_long:
            self.fail("output" if "output" in data else "project", f"the results folder: {too_long}")
        sweep = Sweep(path=self.path, text=self.text, project=project_path, duration=duration, timeout=timeout,
                      seeds=self.seeds(), sampling=sampling, samples=samples,
                      sampling_seed=self.integer("sampling_seed", 0, maximum=MAX_SEED),
                      retries=self.integer("retries", 1, maximum=MAX_RETRIES), retry_on=tuple(retry_on),
                      keep_logs=keep_logs, output=self.base / output,
                      memory_limit_mb=self.number("memory_limit_mb", None, minimum=MIN_MEMORY_MB,
                                                  maximum=MAX_MEMORY_MB))
        tables: dict[str, list[tuple[str, Any]]] = {}
        for section in ("vary", "set"):
            table = data.get(section, {})
            if not isinstance(table, dict):
                self.fail(section, f"{section} must be a table: [{section}] followed by lines path = value.")
            tables[section] = list(_flatten(table))
        self.size_check(sweep, tables["vary"])
        targets = Targets(project)
        for key, value in tables["vary"]:
            sweep.parameters.append(self.parameter(key, f"vary.{key}", value, sampling, targets))
        for key, value in tables["set"]:
            sweep.fixed[key] = self.checked(key, f"set.{key}", value, targets)
        overlap = set(sweep.fixed) & {p.path for p in sweep.parameters}
        if overlap:
            key = sorted(overlap)[0]
            self.fail(f"set.{key}", f"{key} is both varied and set; keep it in one of [vary] and [set].")
        return sweep

    def size_check(self, sweep: Sweep, vary: list[tuple[str, Any]]) -> None:
        """Count the sweep's runs from the shape of [vary] alone (values are checked after), refuse more than
        MAX_RUNS, or more than CONFIRM_RUNS unless confirmed, and tell `on_size` the count: a sweep's size
        is known and said before its values are checked, which takes a moment per value."""
        factors = {"seeds": len(sweep.seeds)}  # what multiplies the count, by key
        if sweep.sampling == "random":
            factors["samples"] = sweep.samples
        else:
            factors.update({f"vary.{name}": self.grid_size(name, f"vary.{name}", value) for name, value in vary})
        count = math.prod(factors.values())
        sets = count // len(sweep.seeds)
        where = max(factors, key=lambda name: factors[name])  # the largest factor: most likely the mistake
        what = (f"{sets:,} parameter set{'s' if sets != 1 else ''} x {len(sweep.seeds):,} "
                f"seed{'s' if len(sweep.seeds) != 1 else ''}")
        if count > MAX_RUNS:
            self.fail(where, f"the sweep makes {count:,} runs ({what}); at most {MAX_RUNS:,} are allowed. Use fewer "
                      "values, steps or seeds, or split it into several sweeps.")
        if count > CONFIRM_RUNS and not self.yes:
            self.fail(where, f"the sweep makes {count:,} runs ({what}), more than {CONFIRM_RUNS:,}: check its ranges "
                      "and seeds, and add --yes to run that many.")
        if self.on_size is not None:
            self.on_size(count, what)

    def grid_size(self, key: str, full: str, value: Any) -> int:
        """How many grid values a [vary] entry has (1 for one `parameter` will refuse); SweepError for
        steps above MAX_RUNS."""
        if isinstance(value, dict) and key != "start":
            steps = value.get("steps")
            if isinstance(steps, int) and not isinstance(steps, bool) and steps > MAX_RUNS:
                self.fail(full, f"{key}: steps must be a whole number from 1 to {MAX_RUNS:,}, not {steps:,}.")
            return steps if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 1 else 1
        return len(value) if isinstance(value, list) and value else 1

    def seeds(self) -> list[int]:
        value = self.data.get("seeds", [0])
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, str):
            match = re.fullmatch(r"\s*(\d+)\s*\.\.\s*(\d+)\s*", value)
            if not match or int(match.group(1)) > int(match.group(2)):
                self.fail("seeds", f"seeds {value!r}: write a range as \"FIRST..LAST\" (e.g. \"1..100\", both "
                          f"included, from 0 to {MAX_SEED:,}), or a list of whole numbers.")
            first, last = int(match.group(1)), int(match.group(2))
            if last > MAX_SEED:
                self.fail("seeds", f"seeds {value!r}: seeds are whole numbers from 0 to {MAX_SEED:,}.")
            if last - first + 1 > MAX_RUNS:
                self.fail("seeds", f"seeds {value!r} makes {last - first + 1:,} runs of each parameter set; at most "
                          f"{MAX_RUNS:,} are allowed.")
            return list(range(first, last + 1))
        if (not isinstance(value, list) or not value
                or any(isinstance(s, bool) or not isinstance(s, int) for s in value)):
            self.fail("seeds", "seeds must be a whole number, a list of them, or a range \"FIRST..LAST\".")
        if any(not 0 <= s <= MAX_SEED for s in value):
            wrong = next(s for s in value if not 0 <= s <= MAX_SEED)
            self.fail("seeds", f"seed {wrong}: seeds are whole numbers from 0 to {MAX_SEED:,}.")
        if len(set(value)) != len(value):
            self.fail("seeds", "seeds lists a seed twice; each seed once.")
        return list(value)

    def parameter(self, key: str, full: str, value: Any, sampling: str, targets: Targets) -> Parameter:
        line = self.lines.get(full)
        if isinstance(value, dict) and key != "start":
            extra = set(value) - RANGE_KEYS
            if extra or "min" not in value or "max" not in value:
                self.fail(full, f"{key}: a range is {{min = A, max = B}} (random sampling) or {{min = A, max = B, "
                          "steps = N}} (a grid of N evenly spaced values).")
            low, high = value["min"], value["max"]
            for bound in (low, high):
                if isinstance(bound, bool) or not isinstance(bound, int | float) or not math.isfinite(bound):
                    self.fail(full, f"{key}: min and max must be numbers.")
            if low > high:
                self.fail(full, f"{key}: min ({low}) is above max ({high}).")
            if not math.isfinite(float(high) - float(low)):
                self.fail(full, f"{key}: min and max are too far apart (max - min must be a finite number).")
            integer = value.get("integer", False)
            if not isinstance(integer, bool):
                self.fail(full, f"{key}: integer must be true or false, not {integer!r}.")
            steps = value.get("steps")
            if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
                self.fail(full, f"{key}: steps must be a whole number of at least 1.")
            if sampling == "grid" and steps is None:
                self.fail(full, f"{key}: a range in a grid needs steps = N (how many evenly spaced values), or "
                          "list the values.")
            parameter = Parameter(key, line, low=float(low), high=float(high), steps=steps, integer=bool(integer))
            for probe in parameter.probes():
                self.checked(key, full, probe, targets)
            return parameter
        if not isinstance(value, list) or not value:
            self.fail(full, f"{key}: give a list of values to vary over (e.g. [1.0, 2.0]) or a range "
                      "{min = A, max = B}; a single value goes under [set].")
        return Parameter(key, line, values=tuple(self.checked(key, full, v, targets) for v in value))

    def checked(self, key: str, full: str, value: Any, targets: Targets) -> Any:
        """`value` converted for `key` and checked as the project's loader would check it."""
        try:
            return targets.check(key, value, self.base)
        except SweepError as exc:
            self.fail(full, f"{key}: {exc.message}")


# --- what a path names --------------------------------------------------------------------------------
