"""numba's compilation of the tyre kernels (sear.physics.tyre), imported only when the compiled kernels are
first wanted (sear.jit says where numba caches them and what loading them costs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sear.jit import compile_functions


def compile_kernels(solve: Callable[..., float], wheel_rays: Callable[..., None]
                    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """`solve` and `wheel_rays` compiled by numba (sear.jit.compile_functions: cached, or without a cache
    where no folder will do)."""
    compiled_solve, compiled_rays = compile_functions(solve, wheel_rays)
    return compiled_solve, compiled_rays


def compile_batch(solve_many: Callable[..., None], wheel_rays_many: Callable[..., None]
                  ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """sear.physics.tyre's batched kernels (bound to numba's `solve` and `wheel_rays` by `batched`)
    compiled by numba."""
    compiled_solve, compiled_rays = compile_functions(solve_many, wheel_rays_many)
    return compiled_solve, compiled_rays
