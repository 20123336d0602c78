"""numba's compilation of SEAR's kernels (the tyres', sear.physics.tyre; the rays', sear.sensors.raykernels):
only this module imports numba, and only inside compile_functions, when compiled kernels are first wanted,
since importing numba and loading the cached kernels cost ~0.5 s of CPU.

Where the compiled code is cached: where `NUMBA_CACHE_DIR` says when it is set; else, when Python keeps
its bytecode under a prefix (`PYTHONPYCACHEPREFIX`, as `make` sets it to the venv), in `numba/` under that
prefix, beside the modules' bytecode; else numba's own choice: the `__pycache__` folder beside the
kernels' module when it is writable (an install the user owns), or the user's cache folder
(~/.cache/numba on Linux) when it is not (a system-wide install). The first run after an install compiles
the kernels (~3.5 s of CPU for the tyres', stated in the README); later runs load them from the cache.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

NO_NUMBA_VARIABLE = "SEAR_NO_NUMBA"
"""Set to 1 (or anything but 0 or empty) to run every kernel as plain Python (or numpy)."""


def numba_wanted() -> bool:
    """False when `SEAR_NO_NUMBA` is set (not to 0): the plain path even where numba is installed."""
    return os.environ.get(NO_NUMBA_VARIABLE, "") in ("", "0")


def cache_dir() -> str | None:
    """The folder numba is told to keep the compiled kernels in, or None for numba's own choice."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    if sys.pycache_prefix:
        return os.path.join(sys.pycache_prefix, "numba")
    return None


def compile_functions(*functions: Callable[..., Any]) -> tuple[Callable[..., Any], ...]:
    """`functions` compiled (`@njit(cache=True)`: loaded from the cache when it holds them; numba does
    either at their first call). Where numba finds no writable cache folder at all (it raises
    RuntimeError then), they are compiled without a cache: every run that loads them compiles them again,
    rather than none running compiled."""
    import numba

    folder = cache_dir()
    if folder:  # numba reads it when it locates a function's cache, so setting it after the import holds
        numba.config.CACHE_DIR = folder  # type: ignore[attr-defined]
    try:
        return tuple(numba.njit(cache=True)(f) for f in functions)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return tuple(numba.njit(f) for f in functions)


def compiled_or_none(build: Callable[[], T], what: str, instead: str) -> T | None:
    """`build()` (kernels compiled with compile_functions and called once each), or None: silently where
    numba (or llvmlite) cannot be imported, with a RuntimeWarning ("`what` could not be compiled (...);
    `instead`") where numba cannot compile them (a numba SEAR was not tested with)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    try:
        return build()
    except Exception as error:
        warnings.warn(f"{what} could not be compiled ({type(error).__name__}: {error}); {instead}", RuntimeWarning,
                      stacklevel=3)
        return None
