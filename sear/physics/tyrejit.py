"""numba's compilation of the tyre kernels (sear.physics.tyre), kept apart so that only this module imports
numba, and only when the compiled kernels are first wanted: importing numba and loading the cached kernels cost
~0.5 s of CPU.

Where the compiled code is cached: where `NUMBA_CACHE_DIR` says when it is set; else, when Python keeps
its bytecode under a prefix (`PYTHONPYCACHEPREFIX`, as `make` sets it to the venv), in `numba/` under that
prefix, beside the modules' bytecode; else numba's own choice: the `__pycache__` folder beside
sear/physics/tyre.py when it is writable (an install the user owns), or the user's cache folder
(~/.cache/numba on Linux) when it is not (a system-wide install). The first run after an install compiles
the kernels (~3.5 s of CPU, stated in the README); later runs load them from the cache.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numba


def cache_dir() -> str | None:
    """The folder numba is told to keep the compiled kernels in, or None for numba's own choice."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    if sys.pycache_prefix:
        return os.path.join(sys.pycache_prefix, "numba")
    return None


def compile_kernels(solve: Callable[..., float], wheel_rays: Callable[..., None]
                    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """`solve` and `wheel_rays` compiled (`@njit(cache=True)`: loaded from the cache when it holds them;
    numba does either at their first call). Where numba finds no writable cache folder at all (it raises
    RuntimeError then), they are compiled without a cache: every run that loads them compiles them again,
    rather than none running compiled."""
    folder = cache_dir()
    if folder:  # numba reads it when it locates a function's cache, so setting it after the import holds
        numba.config.CACHE_DIR = folder  # type: ignore[attr-defined]
    try:
        kernels = numba.njit(cache=True)(solve), numba.njit(cache=True)(wheel_rays)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        kernels = numba.njit(solve), numba.njit(wheel_rays)
    return kernels
