"""Choosing the fixed subset of a fuzz test's cases that the default tier runs.

A fuzz test runs many seeded cases under `make test-slow` (marker `slow`); the default tier (`make test`)
runs a fixed subset of them that reaches every branch of SEAR's code that the full run reaches. The subset
is found here: each case runs under coverage.py (branch coverage of the `sear` package, one coverage
context per case), and a greedy set cover picks cases until their branches (arcs) together are all the
branches of every case. The subsets are written into the tests as lists of case numbers; rerun this
after changing the code a fuzz test exercises and paste what it prints:

    .venv/bin/python -m tests.covering              # every fuzz test's subsets
    .venv/bin/python -m tests.covering limits       # only those whose name starts with "limits"

The arcs counted are those of the test's own process; code a case runs in a child process (`sear run`)
is not measured. Cases must be independent of each other (apart from caches a first case warms).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import sear

Arc = tuple[str, int, int]


def arcs_per_case(run_case: Callable[[int], object], count: int) -> list[frozenset[Arc]]:
    """The branches (file, from line, to line) of the `sear` package that each of `count` cases reaches."""
    import coverage

    cov = coverage.Coverage(branch=True, source=["sear"], data_file=None)
    cov.start()
    try:
        for i in range(count):
            cov.switch_context(str(i))
            run_case(i)
    finally:
        cov.stop()
    data = cov.get_data()
    root = Path(sear.__file__).parent.parent
    per_case: list[set[Arc]] = [set() for _ in range(count)]
    for filename in data.measured_files():
        name = Path(filename).relative_to(root).as_posix()
        for i in range(count):
            data.set_query_contexts([f"^{i}$"])
            per_case[i].update((name, a, b) for a, b in data.arcs(filename) or ())
    return [frozenset(arcs) for arcs in per_case]


def greedy_cover(per_case: Sequence[frozenset[Arc]]) -> list[int]:
    """Case numbers, few, whose arcs together are every case's arcs (ties go to the lower number)."""
    left = frozenset().union(*per_case)
    chosen: list[int] = []
    while left:
        best = max(range(len(per_case)), key=lambda i: (len(per_case[i] & left), -i))
        chosen.append(best)
        left -= per_case[best]
    return sorted(chosen)


def covering_subset(name: str, run_case: Callable[[int], object], count: int) -> list[int]:
    """Print and return the subset of `count` cases that covers every branch they reach together."""
    per_case = arcs_per_case(run_case, count)
    chosen = greedy_cover(per_case)
    union = frozenset().union(*per_case)
    covered = frozenset().union(*(per_case[i] for i in chosen))
    assert covered == union
    print(f"{name}: {len(chosen)} of {count} cases cover all {len(union)} branches the {count} reach: {chosen}",
          flush=True)
    return chosen


def _suites(folder: Path) -> dict[str, Callable[[], object]]:
    """The fuzz tests' case sets, by name: each call prints its subsets."""
    from tests import test_controller_fuzz, test_limits_fuzz, test_model_fuzz

    suites: dict[str, Callable[[], object]] = {}
    for kind in ("project", "sensors"):
        for seed in test_limits_fuzz.SEEDS:
            def limits(kind=kind, seed=seed):
                work = folder / f"limits-{kind}{seed}"
                from sear import resources
                resources.copy_demo(work)
                variants = test_limits_fuzz.variants(work, kind, seed)
                covering_subset(f"limits {kind} seed {seed!r}",
                                lambda i: test_limits_fuzz.validate_one(*variants[i]), len(variants))
            suites[f"limits-{kind}{seed}"] = limits
    for fmt in test_model_fuzz.FORMATS:
        def model(fmt=fmt):
            import pybullet

            work = folder / f"model-{fmt}"
            work.mkdir()
            variants = test_model_fuzz.variants(fmt)
            client = pybullet.connect(pybullet.DIRECT)
            try:
                covering_subset(f"model {fmt}",
                                lambda i: test_model_fuzz.check_variant(work, fmt, i, variants[i], client),
                                len(variants))
            finally:
                pybullet.disconnect(client)
        suites[f"model-{fmt}"] = model

    def controller():
        sessions = test_controller_fuzz.sessions(test_controller_fuzz.MESSAGES)
        with test_controller_fuzz.FuzzedSimulation(folder / "controller") as fuzzed:
            covering_subset("controller sessions", lambda i: fuzzed.session(sessions[i]), len(sessions))
    suites["controller"] = controller
    return suites


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="sear-covering-") as folder:
        suites = _suites(Path(folder))
        wanted = [name for name in suites if not argv or any(name.startswith(a) for a in argv)]
        if not wanted:
            print(f"no fuzz test called {' or '.join(argv)}; there are: {', '.join(suites)}", file=sys.stderr)
            return 2
        for name in wanted:
            suites[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
