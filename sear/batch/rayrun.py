"""`sear batch --ray [ADDRESS]`: each run as a Ray task, on a local Ray instance or a cluster.

Ray is an optional extra (`pip install sear[ray]`). The project's folder travels with the tasks as Ray's
runtime environment (`working_dir`), so a cluster's nodes need SEAR installed but not the project; each
task runs its job exactly as the local pool does (sear.batch.pool.run_job: a worker process per attempt,
the same time-outs and retries), so the rows are the same. A task's run log comes back with its row and
is written into the results folder here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sear.errors import SearError

INSTALL_HINT = "--ray needs Ray, which is an optional extra: pip install 'sear[ray]' (or pip install ray)."
NODE_HINT = ("install SEAR there, the same version as here ({version}), in the Python environment Ray runs in "
             "on that node (pip install 'sear[ray]=={version}'), then run the batch again")
"""What a node without SEAR (or with another version) needs, said in the error that names it."""

UPLOAD_EXCLUDES = ["*-results/", ".git/", "__pycache__/", "*.arrays/"]
"""Left out of the project folder Ray ships: batch results and logs, version control, caches."""


def ray_missing() -> str | None:
    """Why --ray cannot be used here (Ray is not installed), or None."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return INSTALL_HINT
    return None


class RayNodeError(SearError):
    """A node of the Ray cluster cannot run SEAR's runs (SEAR is missing there or another version)."""


PROBE_SOURCE = """
def probe():
    import platform
    import ray
    node = ray.get_runtime_context().get_node_id()
    try:
        import sear
        import sear.batch.pool  # noqa: F401 - the runs' own imports: SEAR's dependencies are there too
    except Exception as exc:
        return node, platform.node(), None, type(exc).__name__ + ": " + str(exc)
    return node, platform.node(), sear.__version__, None
"""
"""The check each node runs before the batch. Compiled here into a function of no module, so Ray ships its
code by value: a node without SEAR could not load a function of sear.batch.rayrun to run it."""


def _probe() -> Callable[[], tuple[str, str, str | None, str | None]]:
    namespace: dict[str, Any] = {"__builtins__": __builtins__}
    exec(compile(PROBE_SOURCE, "<sear node check>", "exec"), namespace)
    probe = namespace["probe"]
    probe.__module__ = None  # no module to import on the node: pickled by value
    return probe


def check_nodes(ray: Any) -> dict[str, str]:
    """Run the node check on every alive node of the cluster `ray` is connected to (one task pinned to
    each); the nodes' host names by node id. RayNodeError naming every node where SEAR cannot be imported
    or is another version than here."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from sear import __version__

    remote = ray.remote(num_cpus=0, max_retries=0)(_probe())
    nodes = [node["NodeID"] for node in ray.nodes() if node.get("Alive")]
    refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()
            for node in nodes]
    hosts: dict[str, str] = {}
    problems: list[str] = []
    for node, ref in zip(nodes, refs, strict=True):
        try:
            node_id, host, version, error = ray.get(ref)
        except ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            problems.append(f"node {node[:12]}: the check could not run ({first})")
            continue
        hosts[node_id] = host
        if error is not None:
            problems.append(f"node {node_id[:12]} ({host}): SEAR cannot be imported there ({error})")
        elif version != __version__:
            problems.append(f"node {node_id[:12]} ({host}): SEAR {version} is installed there")
    if problems:
        raise RayNodeError(f"{len(problems)} of the Ray cluster's {len(nodes)} node(s) cannot run SEAR's runs: "
                           + "; ".join(problems) + ". " + NODE_HINT.format(version=__version__) + ".")
    return hosts


def ray_task(job: dict[str, Any], project_folder: str, shipped: bool) -> dict[str, Any]:
    """One job in a Ray worker. `shipped`: the worker's working folder is the shipped copy of the project's
    folder, so the job's paths into the project folder are moved there. The run's log is written to a
    temporary folder and returned with the row (as file name -> bytes)."""
    from sear.batch.pool import run_job

    here = os.getcwd()

    def moved(value: Any) -> Any:
        if shipped and isinstance(value, str) and value.startswith(project_folder + os.sep):
            return os.path.join(here, os.path.relpath(value, project_folder))
        return value

    job = dict(job)
    job["project"] = moved(job["project"])
    job["params"] = {key: moved(value) for key, value in job["params"].items()}
    files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="sear-ray-") as scratch:
        keep = job.get("run_dir") is not None
        run_dir = Path(scratch) / "run"
        job["run_dir"] = str(run_dir) if keep else None
        row = run_job(job, Path(scratch))
        if keep and run_dir.is_dir():
            for file in sorted(run_dir.rglob("*")):
                if file.is_file():
                    files[str(file.relative_to(run_dir))] = file.read_bytes()
    import platform

    import ray

    context = ray.get_runtime_context()
    return {"row": row, "files": files, "node": {"ray_node": context.get_node_id(), "host": platform.node()}}


def run_ray(jobs: list[dict[str, Any]], address: str | None, project_folder: Path,
            on_row: Callable[[dict[str, Any]], None], *, cpus: int | None = None,
            output: Path | None = None, placements: dict[str, dict[str, str]] | None = None) -> bool:
    """Run `jobs` as Ray tasks (one CPU each) on the cluster at `address`, or on a new local Ray instance
    with `cpus` CPUs; the project folder (less `output` and UPLOAD_EXCLUDES) is the job's working folder
    on every node. A Ray instance this process started already is used as it is (its job's working folder
    is its own, so the project is read where it lies: a single machine). `on_row` gets each row as it
    finishes; `placements` (when given) where each finished run ran, by run id: its Ray node's id and host
    name. Every node is checked first (check_nodes: RayNodeError when one lacks SEAR). True when all ran;
    False when Ctrl+C stopped the batch (tasks under way cancelled, finished rows kept)."""
    import ray

    folder = str(project_folder.absolute())
    started = shipped = False
    if not ray.is_initialized():
        excludes = list(UPLOAD_EXCLUDES)
        if output is not None and output.absolute().is_relative_to(folder):
            excludes.append("/" + str(output.absolute().relative_to(folder)) + "/")
        ray.init(address=address or None, num_cpus=None if address else cpus, include_dashboard=False,
                 log_to_driver=False, configure_logging=False,
                 runtime_env={"working_dir": folder, "excludes": excludes})
        started = shipped = True
    try:
        check_nodes(ray)
        remote = ray.remote(num_cpus=1)(ray_task)
        refs = {}
        for job in jobs:
            ref = remote.options(max_retries=max(0, int(job["retries"])),
                                 name=f"sear-batch-{job['run_id']}").remote(job, folder, shipped)
            refs[ref] = job
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    job = refs[ref]
                    try:
                        answer = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # the task's process died every time it was tried
                        answer = {"row": _lost_row(job, exc), "files": {}}
                    _write_files(job, answer["files"])
                    if placements is not None and "node" in answer:
                        placements[job["run_id"]] = answer["node"]
                    on_row(answer["row"])
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            return False
        return True
    finally:
        if started:
            ray.shutdown()


def _lost_row(job: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    from sear.batch.results import param_columns

    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return {"run_id": job["run_id"], "index": job["index"], "seed": job["seed"], **param_columns(job["params"]),
            "status": "killed", "error": f"the Ray task was lost ({first}).", "attempts": int(job["retries"]) + 1,
            "earlier_errors": ""}


def _write_files(job: dict[str, Any], files: dict[str, bytes]) -> None:
    run_dir = job.get("run_dir")
    if not run_dir:
        return
    for name, data in files.items():
        target = Path(run_dir) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
