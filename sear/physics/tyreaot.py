"""The tyre kernels (sear.physics.tyre's `solve` and `wheel_rays`) compiled ahead of time into an extension
module, so that runs use compiled code from their first step without importing numba.

    python -m sear.physics.tyrebuild    (`make setup` runs it; 3.5-5 s of CPU, once per install)

Why: a process that loads numba's just-in-time kernels, even from numba's cache, pays 0.4-0.9 s of CPU
for importing numba, more than a short run's tyre updates cost as plain Python; so without this module
runs step their first COMPILE_AFTER updates as Python (~130 µs each against ~30 µs compiled) and then
stop to load numba. numba's `pycc` writes the same functions, compiled by the same LLVM, into an ordinary
extension module that needs neither numba nor a compiler to load: importing it costs about a millisecond.
Building it needs numba, setuptools and a C compiler, and takes seconds, so it is a step of the install
(like compiling bytecode), not something a run stops for: sear.physics.tyre uses the module where it has
been built and otherwise works as before.

The module is kept where numba keeps SEAR's just-in-time kernels (`NUMBA_CACHE_DIR`, or `numba/` under
`PYTHONPYCACHEPREFIX`), else in `__pycache__` beside this file when that can be written, else in the
user's cache folder; it is named after a hash of sear/physics/tyre.py and of the Python that builds it, so
an edited kernel or another interpreter never loads a stale one. It is compiled for the platform's generic
CPU, not the build machine's own, so a cache folder shared between machines holds nothing a machine
cannot run; its results equal the plain Python ones to ~1e-12 N, as numba's just-in-time kernels' do
(tests/physics/test_tyre_aot.py), and the demo's log is byte-identical with it. numba marks pycc "pending
deprecation" with a successor announced; where pycc is gone, or the build fails, `build` says why and
runs fall back to numba's just-in-time kernels.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sear.jit import cache_dir

PREFIX = "sear_tyre_"
"""Start of the compiled module's name (then the hash of its source and interpreter)."""
SOLVE_SIGNATURE = "f8(f8[:], f8[:], f8[:], f8[:], f8[:], f8[:], f8[:])"
"""sear.physics.tyre.solve on float64 arrays (body, params, wheels, hits, impulses, out, work)."""
WHEEL_RAYS_SIGNATURE = "void(f8[:], f8[:], f8[:], f8[:], f8[:])"
"""sear.physics.tyre.wheel_rays on float64 arrays (body, params, hard_points, wheels, rays)."""

SOLVE_MANY_SIGNATURE = ("void(f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1], "
                        "f8[::1])")
"""sear.physics.tyre.solve_many on C-ordered 2-D float64 arrays (one row per vehicle) and the flags."""
WHEEL_RAYS_MANY_SIGNATURE = "void(f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1])"
"""sear.physics.tyre.wheel_rays_many on C-ordered 2-D float64 arrays (one row per vehicle)."""


def module_name(source: Path) -> str:
    """The compiled module's name for the kernels' source file `source`: PREFIX and a hash of the source's
    bytes and of this interpreter's version, so a changed kernel or another Python builds a new one."""
    digest = hashlib.sha256(source.read_bytes())
    digest.update(sys.version.encode())
    return PREFIX + digest.hexdigest()[:16]


def folder() -> Path:
    """Where the compiled module is kept: numba's cache folder for SEAR's kernels when one is set
    (NUMBA_CACHE_DIR, or under PYTHONPYCACHEPREFIX), else `__pycache__` beside sear/physics/tyre.py when
    that can be written, else the user's cache folder (XDG_CACHE_HOME or ~/.cache)/sear."""
    numba_cache = cache_dir()
    if numba_cache:
        return Path(numba_cache)
    beside = Path(__file__).resolve().parent / "__pycache__"
    if os.access(beside if beside.is_dir() else beside.parent, os.W_OK):
        return beside
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sear"


def path(source: Path, where: Path) -> Path:
    """The file the module of the kernels in `source` is built into in the folder `where`."""
    return where / (module_name(source) + importlib.machinery.EXTENSION_SUFFIXES[0])


def _module(source: Path, where: Path | None) -> Any:
    """The compiled module of the kernels in `source` built in `where` (default: folder()), loaded once per
    process, or None where it has not been built or cannot be loaded."""
    file = path(source, folder() if where is None else where)
    if not file.is_file():
        return None
    name = file.name.split(".")[0]
    if str(file) in _loaded:
        return _loaded[str(file)]
    try:
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError):  # damaged, or built for another platform
        return None
    _loaded[str(file)] = module
    return module


_loaded: dict[str, Any] = {}
"""The modules loaded so far, by file: an extension module cannot be loaded twice in a process."""


def load(source: Path, where: Path | None = None) -> tuple[Callable[..., float], Callable[..., None]] | None:
    """The compiled `solve` and `wheel_rays` of the kernels in `source` when their module has been built
    in `where` (default: folder()), else None (also for a module that cannot be loaded)."""
    module = _module(source, where)
    try:
        return None if module is None else (module.solve, module.wheel_rays)
    except AttributeError:
        return None


def load_batched(source: Path, where: Path | None = None) -> tuple[Callable[..., None], Callable[..., None]] | None:
    """The compiled `solve_many` and `wheel_rays_many` (sear.physics.tyre) of the module `load` loads, or None."""
    module = _module(source, where)
    try:
        return None if module is None else (module.solve_many, module.wheel_rays_many)
    except AttributeError:
        return None


def build(source: Path, solve: Callable[..., float], wheel_rays: Callable[..., None],
          where: Path | None = None,
          batched: Callable[..., tuple[Callable[..., None], Callable[..., None]]] | None = None
          ) -> tuple[Callable[..., float], Callable[..., None]] | None:
    """Compile `solve` and `wheel_rays` (the kernels defined in `source`) with numba's pycc into their
    module in `where` (default: folder()) and load it (None where the module built cannot be loaded).
    With `batched` (sear.physics.tyre.batched, given here since this module must not import that one) the
    module has `solve_many` and `wheel_rays_many` too (`load_batched`).
    BuildError where it cannot be built (no numba, pycc, setuptools or C compiler; a folder that cannot be
    written). Built in a temporary folder and moved into place in one step, so a process starting at the
    same time loads a whole module or none."""
    target = folder() if where is None else where
    name = module_name(source)
    try:
        target.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's pending deprecation of pycc (see the docstring)
            from numba.pycc import CC

            with tempfile.TemporaryDirectory(prefix=".sear-tyre-build-", dir=target) as tmp:
                cc: Any = CC(name)
                cc.output_dir = tmp
                cc.verbose = False
                cc.export("solve", SOLVE_SIGNATURE)(solve)
                cc.export("wheel_rays", WHEEL_RAYS_SIGNATURE)(wheel_rays)
                if batched is not None:
                    from numba import njit

                    solve_many, wheel_rays_many = batched(njit(solve), njit(wheel_rays))
                    cc.export("solve_many", SOLVE_MANY_SIGNATURE)(solve_many)
                    cc.export("wheel_rays_many", WHEEL_RAYS_MANY_SIGNATURE)(wheel_rays_many)
                cc.compile()
                built = Path(tmp) / cc.output_file
                os.replace(built, path(source, target))
    except Exception as error:  # any failure of this optional build: numba's JIT kernels run instead
        raise BuildError(f"{type(error).__name__}: {error}") from error
    return load(source, target)


class BuildError(RuntimeError):
    """The module could not be built (numba, pycc, setuptools or a C compiler missing, or the build failed)."""
