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
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sear.batch.parameters import SweepError, Targets
from sear.errors import SearError
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


def load_sweep(path: str | Path) -> Sweep:
    """Read and check a sweep file: SweepError naming the line and key of the first mistake. The
    project, its sensors file and user code are read to check every path and value."""
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
    return SweepReader(path, text, data).read()


class SweepReader:
    """The state of reading one sweep file: its text's key lines, for messages."""

    def __init__(self, path: Path, text: str, data: dict[str, Any]) -> None:
        self.path = path
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

    def number(self, key: str, default: float | None, *, positive: bool = True) -> float | None:
        value = self.data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(key, f"{key} must be a number, not {value!r}.")
        if positive and value <= 0:
            self.fail(key, f"{key} must be greater than 0, not {value!r}.")
        return float(value)

    def integer(self, key: str, default: int, *, minimum: int = 0) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(key, f"{key} must be a whole number of at least {minimum}, not {value!r}.")
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
        duration = self.number("duration", None)
        if duration is None:
            self.fail("duration", "the sweep file sets no duration; add e.g. duration = 10.0 (simulated seconds "
                      "per run).")
        timeout = self.number("timeout", max(60.0, 10.0 * duration))
        assert timeout is not None
        sampling = data.get("sampling", "grid")
        if sampling not in ("grid", "random"):
            self.fail("sampling", f"sampling must be \"grid\" or \"random\", not {sampling!r}.")
        samples = self.integer("samples", 0, minimum=0)
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
        sweep = Sweep(path=self.path, text=self.text, project=project_path, duration=duration, timeout=timeout,
                      seeds=self.seeds(), sampling=sampling, samples=samples,
                      sampling_seed=self.integer("sampling_seed", 0), retries=self.integer("retries", 1),
                      retry_on=tuple(retry_on), keep_logs=keep_logs,
                      memory_limit_mb=self.number("memory_limit_mb", None), output=self.base / output)
        targets = Targets(project)
        for section in ("vary", "set"):
            table = data.get(section, {})
            if not isinstance(table, dict):
                self.fail(section, f"{section} must be a table: [{section}] followed by lines path = value.")
            for key, value in _flatten(table):
                full = f"{section}.{key}"
                if section == "vary":
                    sweep.parameters.append(self.parameter(key, full, value, sampling, targets))
                else:
                    sweep.fixed[key] = self.checked(key, full, value, targets)
        overlap = set(sweep.fixed) & {p.path for p in sweep.parameters}
        if overlap:
            key = sorted(overlap)[0]
            self.fail(f"set.{key}", f"{key} is both varied and set; keep it in one of [vary] and [set].")
        count = len(sweep.seeds) * (samples if sampling == "random" else
                                    math.prod(len(p.grid_values()) for p in sweep.parameters))
        if count > MAX_RUNS:
            self.fail("vary", f"the sweep makes {count:,} runs; at most {MAX_RUNS:,} are allowed.")
        return sweep

    def seeds(self) -> list[int]:
        value = self.data.get("seeds", [0])
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, str):
            match = re.fullmatch(r"\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", value)
            if not match or int(match.group(1)) > int(match.group(2)):
                self.fail("seeds", f"seeds {value!r}: write a range as \"FIRST..LAST\" (e.g. \"1..100\", both "
                          "included), or a list of whole numbers.")
            first, last = int(match.group(1)), int(match.group(2))
            if last - first >= MAX_RUNS:
                self.fail("seeds", f"seeds {value!r} makes more than {MAX_RUNS:,} runs.")
            return list(range(first, last + 1))
        if (not isinstance(value, list) or not value
                or any(isinstance(s, bool) or not isinstance(s, int) for s in value)):
            self.fail("seeds", "seeds must be a whole number, a list of them, or a range \"FIRST..LAST\".")
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
            integer = value.get("integer", False)
            steps = value.get("steps")
            if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
                self.fail(full, f"{key}: steps must be a whole number of at least 1.")
            if sampling == "grid" and steps is None:
                self.fail(full, f"{key}: a range in a grid needs steps = N (how many evenly spaced values), or "
                          "list the values.")
            parameter = Parameter(key, line, low=float(low), high=float(high), steps=steps, integer=bool(integer))
            for probe in (parameter.grid_values() if steps else (low, high)):
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
