"""Running a batch's runs: each in a worker process of its own, `-j N` at a time, with time-outs and retries.

Every attempt at a run is a fresh worker process (sear.batch.worker, forked from a fork server that has
SEAR imported) in a session of its own (so the batch's Ctrl+C reaches only the batch, and ending the
session ends the run's user code process too). A
run that crashes, runs out of memory, outlives its time-out or is killed from outside is recorded with
its error and tried again (`retries`, the failure kinds in `retry_on`); nothing one run does stops
another or the batch. The same `run_job` runs a job on a local thread and inside a Ray task
(sear.batch.rayrun), so both give the same rows.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, TextIO

from sear.batch import worker
from sear.batch.results import param_columns
from sear.batch.sweep import RunSpec, Sweep

OUTPUT_TAIL = 2000
"""Characters of a failed run's console output kept in its error when it left no result."""


class Stopped(Exception):
    """The batch is stopping (Ctrl+C): the attempt under way was ended and is not recorded."""


class Active:
    """The worker processes running now, so Ctrl+C can end them all; and the stop flag."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.procs: set[BaseProcess] = set()
        self.stop = threading.Event()

    def add(self, proc: BaseProcess) -> None:
        with self.lock:
            self.procs.add(proc)
        if self.stop.is_set():
            _end_session(proc)

    def remove(self, proc: BaseProcess) -> None:
        with self.lock:
            self.procs.discard(proc)

    def stop_all(self) -> None:
        self.stop.set()
        with self.lock:
            procs = list(self.procs)
        for proc in procs:
            _end_session(proc)


def _end_session(proc: BaseProcess) -> None:
    """Kill a worker and everything in its session (its user code process)."""
    pid = proc.pid
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the worker's session: it and its user code process
    with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
        if proc.exitcode is None:
            proc.kill()  # killed before it made its session


_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()


def _context() -> Any:
    """The fork server the workers start from: SEAR, pybullet, numpy and trimesh imported once there, so a
    worker starts in milliseconds rather than the second or two those imports take (each run still has
    a process of its own)."""
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(worker.PRELOAD)
            _CONTEXT = context
        return _CONTEXT


def make_job(sweep: Sweep, run: RunSpec, output: Path | None) -> dict[str, Any]:
    """Everything a run needs, as plain data (it travels to a Ray task as it is)."""
    return {"run_id": run.run_id, "index": run.index, "seed": run.seed, "params": run.params,
            "project": str(sweep.project), "duration": sweep.duration, "timeout": sweep.timeout,
            "retries": sweep.retries, "retry_on": list(sweep.retry_on), "memory_limit_mb": sweep.memory_limit_mb,
            "run_dir": str(output / "runs" / run.run_id) if output is not None and sweep.keep_logs else None}


def attempt(job: dict[str, Any], scratch: Path, active: Active | None = None,
            log: Path | None = None) -> dict[str, Any]:
    """One attempt at a job in a fresh worker process: its result (status, error, metrics) and
    wall_time_s. Stopped when the batch stopped it."""
    scratch.mkdir(parents=True, exist_ok=True)
    result_file = scratch / "result.json"
    result_file.unlink(missing_ok=True)
    spec = {"project": job["project"], "params": job["params"], "seed": job["seed"], "duration": job["duration"],
            "log": str(log) if log is not None else None, "result_file": str(result_file),
            "memory_limit_mb": job.get("memory_limit_mb"), "scratch": str(scratch)}
    (scratch / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    run_dir = Path(job["run_dir"]) if job.get("run_dir") else None
    output = (run_dir / "output.txt") if run_dir is not None else scratch / "output.txt"
    output.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    proc = _context().Process(target=worker.child, args=(str(scratch / "spec.json"), str(output)),
                              name=f"sear-batch-{job['run_id']}")
    proc.start()
    if active is not None:
        active.add(proc)
    try:
        proc.join(job["timeout"])
        timed_out = proc.exitcode is None
    finally:
        _end_session(proc)  # a run's user code process ends with it
        proc.join()
        status = proc.exitcode
        proc.close()
        if active is not None:
            active.remove(proc)
    assert status is not None
    wall = time.perf_counter() - start
    if active is not None and active.stop.is_set():
        raise Stopped
    result: dict[str, Any]
    if timed_out:
        result = {"status": "timeout", "error": f"the run did not end within its time-out of {job['timeout']:g} s "
                  "of wall time, so it was ended."}
    elif result_file.is_file() and status == 0:
        result = json.loads(result_file.read_text(encoding="utf-8"))
    elif status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else f"signal {-status}"
        if -status in (signal.SIGKILL, signal.SIGTERM):
            result = {"status": "killed", "error": f"the run's process was killed by {name} (from outside, or by "
                      "the system's out-of-memory killer)."}
        else:
            result = {"status": "crash", "error": f"the run's process crashed ({name})."}
    else:
        text = output.read_text(encoding="utf-8", errors="replace") if output.is_file() else ""
        tail = text[-OUTPUT_TAIL:].strip()
        result = {"status": "crash", "error": f"the run's process ended with exit status {status} without a "
                  f"result.\n{tail}".strip()}
    result["wall_time_s"] = round(wall, 3)
    return result


def run_job(job: dict[str, Any], scratch_root: Path, active: Active | None = None) -> dict[str, Any]:
    """A job with its retries: its row for the results table (the last attempt's result, how many
    attempts it took and the earlier attempts' errors)."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{job['run_id']}-", dir=scratch_root))
    run_dir = Path(job["run_dir"]) if job.get("run_dir") else None
    log = run_dir / "log.csv" if run_dir is not None else None
    earlier: list[str] = []
    try:
        attempts = 0
        while True:
            attempts += 1
            result = attempt(job, scratch, active, log)
            status = result["status"]
            if status == "ok" or status not in job["retry_on"] or attempts > job["retries"]:
                break
            earlier.append(f"attempt {attempts}: {status}: {result.get('error', '')}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"run_id": job["run_id"], "index": job["index"], "seed": job["seed"], **param_columns(job["params"]),
            **result, "attempts": attempts, "earlier_errors": "\n".join(earlier)}


SOCKET_PATH_MAX = 100
"""Characters a Unix socket's path may have (the system's limit is 107, less a margin)."""


@contextlib.contextmanager
def fork_server_folder(folder: Path) -> Iterator[None]:
    """While in the block, multiprocessing keeps its temporary files (the fork server's socket) in `folder`,
    the batch's scratch folder, not in a `pymp-*` folder of its own: a batch killed with SIGKILL leaves
    that folder behind, and only the batch's own folder is known to be removable (its workers remove it
    when the batch dies, the next batch when none ran). Left as it is when the socket's path would be
    too long. multiprocessing has no public setting for this; its process configuration's 'tempdir' is
    what multiprocessing.util.get_temp_dir reads."""
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    previous = config.get("tempdir")
    fits = len(str(folder)) + len("/listener-12345678") <= SOCKET_PATH_MAX
    if fits:
        config["tempdir"] = str(folder)
    try:
        yield
    finally:
        if fits:
            if previous is None:
                config.pop("tempdir", None)
            else:
                config["tempdir"] = previous


def stop_fork_server() -> None:
    """End the fork server and multiprocessing's resource tracker beside it (they would otherwise live as
    long as this process): after a batch, so a program or test that runs one leaves no process behind.
    The next batch starts new ones. multiprocessing has no public call for this; its module-level
    objects have _stop()."""
    from multiprocessing import forkserver, resource_tracker

    with _CONTEXT_LOCK:
        for module, name in ((forkserver, "_forkserver"), (resource_tracker, "_resource_tracker")):
            stop = getattr(getattr(module, name, None), "_stop", None)
            if callable(stop):
                stop()


class Progress:
    """A progress line with the runs done, failed and the time left (on a terminal, redrawn in place;
    otherwise a line per finished run)."""

    def __init__(self, total: int, done: int, stream: TextIO | None) -> None:
        self.total = total
        self.done = done
        self.first = done
        self.failed = 0
        self.start = time.monotonic()
        self.stream = stream
        self.tty = bool(stream is not None and stream.isatty())

    def eta(self) -> str:
        finished = self.done - self.first
        if finished == 0:
            return "--:--"
        left = (time.monotonic() - self.start) / finished * (self.total - self.done)
        minutes, seconds = divmod(math.ceil(left), 60)
        return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}" if minutes >= 60 else f"{minutes}:{seconds:02d}"

    def update(self, row: dict[str, Any]) -> None:
        self.done += 1
        if row["status"] != "ok":
            self.failed += 1
        if self.stream is None:
            return
        share = self.done / self.total if self.total else 1.0
        failed = f", {self.failed} failed" if self.failed else ""
        if self.tty:
            bar = "#" * int(share * 30)
            self.stream.write(f"\r[{bar:<30}] {self.done}/{self.total} {share:4.0%}{failed}, ETA {self.eta()}  ")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            what = row["status"] if row["status"] == "ok" else f"{row['status']}: {row.get('error', '')[:100]}"
            self.stream.write(f"sear batch: {row['run_id']} {what} ({row.get('wall_time_s', 0):.1f} s) "
                              f"[{self.done}/{self.total}{failed}, ETA {self.eta()}]\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.stream is not None and self.done != self.total:
            self.stream.write("\n")
            self.stream.flush()


def run_local(jobs: list[dict[str, Any]], workers: int, scratch_root: Path,
              on_row: Callable[[dict[str, Any]], None]) -> bool:
    """Run `jobs` on `workers` threads, each waiting on its worker processes; `on_row` gets each row as
    its run finishes (in this thread). Returns True when every job ran; False when Ctrl+C stopped the
    batch (the runs under way ended and not recorded, those finished kept)."""
    active = Active()
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="sear-batch")
    futures: set[Future[dict[str, Any]]] = {pool.submit(run_job, job, scratch_root, active) for job in jobs}
    try:
        while futures:
            done, futures = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                on_row(future.result())
    except KeyboardInterrupt:
        active.stop_all()
        for future in futures:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        for future in futures:  # runs that finished while stopping are kept
            if future.done() and not future.cancelled() and future.exception() is None:
                on_row(future.result())
        return False
    pool.shutdown(wait=True)
    return True
