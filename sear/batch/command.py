"""`sear batch`: a whole batch (results folder, manifest, runs, tables, report) and `--rerun`."""

from __future__ import annotations

import filecmp
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, TextIO

from sear import exitcodes
from sear.batch import results
from sear.batch.pool import attempt, fork_server_folder, make_job, run_local, stop_fork_server
from sear.batch.sweep import Sweep, SweepError, load_sweep
from sear.models.filecheck import path_too_long
from sear.project import Project


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _say(text: str, stream: TextIO | None) -> None:
    if stream is not None:
        stream.write(text + "\n")
        stream.flush()


SCRATCH_PREFIX = "sear-batch-"
"""A batch's scratch folder in the temporary folder is SCRATCH_PREFIX + its process id + '-' + a random
tail (the runs' copies of the user code, their specs and results before they reach the table)."""


def remove_stale_scratch() -> None:
    """Remove the scratch folders of batches that were killed (SIGKILL, a power cut) before they could:
    those whose process no longer exists. Their workers remove their own folders when the batch dies;
    this catches what was left where no run was under way. A folder of a living process is left alone."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = folder.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or not folder.is_dir() or folder.is_symlink():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (PermissionError, OverflowError):
            continue


def prepare(sweep: Sweep, output: Path, *, resume: bool) -> tuple[list[Any], set[str]]:
    """The output folder made (or, resuming, checked against the manifest); the runs and the ids done."""
    too_long = path_too_long(output)
    if too_long:
        raise SweepError(f"the results folder: {too_long}", file=sweep.path)
    runs = sweep.runs()
    done: set[str] = set()
    if resume:
        manifest = results.read_manifest(output)
        changed = results.changes(manifest, sweep.sha256, results.project_hashes(sweep.project))
        if changed:
            raise SweepError(f"cannot resume: {', '.join(changed)} changed since the batch in {output} started, "
                             "so its runs would not be comparable; start a new batch (another output folder).",
                             file=sweep.path)
        done = {row["run_id"] for row in results.read_rows(output)}
    else:
        if output.exists() and (output / results.MANIFEST).exists():
            raise SweepError(f"{output} holds a batch's results already; add --resume to finish it, or choose "
                             "another output folder (-o DIR, or output = \"...\" in the sweep file).",
                             file=sweep.path)
        try:
            output.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"the output folder {output} cannot be made ({exc.strerror}).",
                             file=sweep.path) from None
        results.write_manifest(output, results.make_manifest(sweep, runs))
    return runs, done


def run_batch(sweep_path: str | Path, *, workers: int | None = None, output: str | Path | None = None,
              resume: bool = False, ray: str | None = None, use_ray: bool = False, report: bool = True,
              yes: bool = False, stream: TextIO | None = sys.stderr) -> int:
    """Run a sweep file's batch; exit status 0 when every run succeeded, 1 when some failed (they are in
    the table), 130 when Ctrl+C stopped it (what finished is kept; --resume runs the rest). The workers
    start from a multiprocessing fork server, so a script that calls this needs the usual
    `if __name__ == "__main__":` guard. A sweep of more than CONFIRM_RUNS runs needs `yes`; its size is
    said as soon as it is known."""

    def on_size(count: int, what: str) -> None:
        _say(f"sear batch: {Path(sweep_path).name} makes {count:,} run{'s' if count != 1 else ''} ({what}); "
             "checking its values.", stream)

    sweep = load_sweep(sweep_path, yes=yes, on_size=on_size)
    folder = Path(output).absolute() if output is not None else sweep.output
    runs, done = prepare(sweep, folder, resume=resume)
    todo = [make_job(sweep, run, folder) for run in runs if run.run_id not in done]
    workers = workers or os.cpu_count() or 1
    plural = "s" if workers != 1 else ""
    where = (f"the Ray cluster at {ray}" if use_ray and ray else f"a local Ray instance ({workers} CPU{plural})"
             if use_ray else f"{workers} local worker{plural}")
    skipped = f" ({len(done)} already done)" if done else ""
    _say(f"sear batch: {len(todo)} of {len(runs)} runs of {sweep.project.name} on {where}{skipped}; results in "
         f"{folder}", stream)
    from sear.batch.pool import Progress

    progress = Progress(len(runs), len(done), stream)

    placements: dict[str, dict[str, str]] = {}
    """Where each run finished here ran (the manifest's `ran_on`): a Ray node, or this machine."""
    here = {"host": platform.node()}

    def on_row(row: dict[str, Any]) -> None:
        results.append_row(folder, row)
        if not use_ray:
            placements[row["run_id"]] = here
        progress.update(row)

    remove_stale_scratch()
    scratch_root = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (kill, a job scheduler) as Ctrl+C: the runs under way are ended with the batch. SIGINT is
        # set too, as `sear run` sets it: a batch started from a script's background job inherits it ignored.
        previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, _interrupt),
                    signal.SIGINT: signal.signal(signal.SIGINT, _interrupt)}
    try:
        if use_ray:
            from sear.batch.rayrun import run_ray

            complete = run_ray(todo, ray, sweep.project.parent, on_row, cpus=workers, output=folder,
                               placements=placements)
        else:
            with fork_server_folder(scratch_root):
                complete = run_local(todo, workers, scratch_root, on_row)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        progress.close()
        stop_fork_server()
        shutil.rmtree(scratch_root, ignore_errors=True)
    results.record_placements(folder, placements)
    rows = results.read_rows(folder)
    prefixes = results.robot_prefixes(Project.load(sweep.project))
    results.write_tables(folder, rows, prefixes)
    if report:
        from sear.batch.report import write_report

        write_report(folder, rows, sweep, prefixes)
    failed = [row for row in rows if row["status"] != "ok"]
    _say(f"sear batch: {len(rows)} of {len(runs)} runs done, {len(failed)} failed; table in "
         f"{folder / results.RESULTS_CSV}" + (f", report in {folder / 'report.html'}" if report else ""), stream)
    if not complete:
        _say(f"sear batch: interrupted; the {len(rows)} finished runs are kept. `sear batch {sweep.path} --resume` "
             "runs the rest.", stream)
        return exitcodes.INTERRUPTED
    return exitcodes.USER_ERROR if failed else exitcodes.OK


def rerun(results_folder: str | Path, run_id: str, *, log: str | Path | None = None,
          stream: TextIO | None = sys.stdout) -> int:
    """Run one run of a batch again from its manifest, its log written to `log` (default
    RESULTS/rerun/RUN_ID/log.csv), and compare it with the log the batch kept: 0 when byte for byte the
    same (or none was kept), 1 when it differs or the run fails."""
    folder = Path(results_folder)
    if folder.is_file():
        folder = folder.parent
    manifest = results.read_manifest(folder)
    by_id = {run["run_id"]: run for run in manifest["runs"]}
    if run_id not in by_id:
        import difflib

        hint = difflib.get_close_matches(run_id, by_id, n=1)
        raise SweepError(f"the batch has no run {run_id!r}" + (f"; did you mean {hint[0]!r}?" if hint else
                         f" (its runs are {next(iter(by_id), '')} to {list(by_id)[-1] if by_id else ''})."),
                         file=folder / results.MANIFEST)
    run = by_id[run_id]
    project = Path(manifest["project"]["file"])
    changed = results.changes(manifest, None, results.project_hashes(project))
    if changed:
        _say(f"sear batch: warning: {', '.join(changed)} changed since the batch; the log may differ.", stream)
    settings = manifest["settings"]
    target = Path(log) if log is not None else folder / "rerun" / run_id / "log.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    job = {"run_id": run_id, "index": run["index"], "seed": run["seed"], "params": run["params"],
           "project": str(project), "duration": settings["duration"], "timeout": settings["timeout"],
           "memory_limit_mb": settings["memory_limit_mb"], "run_dir": str(target.parent)}
    with tempfile.TemporaryDirectory(prefix="sear-rerun-") as scratch:
        try:
            result = attempt(job, Path(scratch), log=target)
        finally:
            stop_fork_server()
    _say(f"sear batch: {run_id} (seed {run['seed']}) rerun: {result['status']}"
         + (f": {result['error']}" if result.get("error") else "") + f"; log {target}", stream)
    kept = folder / "runs" / run_id / "log.csv"
    if not kept.is_file():
        _say("sear batch: the batch kept no log of this run to compare with.", stream)
        return exitcodes.OK if result["status"] == "ok" else exitcodes.USER_ERROR
    same = _same_log(kept, target)
    _say(f"sear batch: the log is {'byte for byte the same as' if same else 'DIFFERENT from'} the batch's {kept}.",
         stream)
    return exitcodes.OK if same else exitcodes.USER_ERROR


def _same_log(a: Path, b: Path) -> bool:
    """Whether two logs (FILE.csv and its FILE.arrays/) hold the same bytes."""
    if not filecmp.cmp(a, b, shallow=False):
        return False
    arrays_a, arrays_b = a.with_name(a.stem + ".arrays"), b.with_name(b.stem + ".arrays")
    names_a = sorted(p.name for p in arrays_a.glob("*")) if arrays_a.is_dir() else []
    names_b = sorted(p.name for p in arrays_b.glob("*")) if arrays_b.is_dir() else []
    return names_a == names_b and all(filecmp.cmp(arrays_a / n, arrays_b / n, shallow=False) for n in names_a)
