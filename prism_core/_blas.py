"""The BLAS and OpenMP thread pools of this process, through threadpoolctl: what is loaded
(:func:`blas_info`, for ``prism doctor`` and the NumPy backend's capabilities) and a limit on
their threads inside a block (:func:`blas_threads`).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

__all__ = ["blas_info", "blas_threads"]

#: The threadpoolctl keys :func:`blas_info` reports, when present.
_BLAS_KEYS = (
    "user_api",
    "internal_api",
    "version",
    "num_threads",
    "prefix",
    "filepath",
    "threading_layer",
    "architecture",
)


def _load_numpy() -> None:
    # threadpoolctl only sees libraries already loaded: NumPy brings in its BLAS.
    with contextlib.suppress(ImportError):
        importlib.import_module("numpy")


def blas_info() -> list[dict[str, object]]:
    """The BLAS and OpenMP thread pools loaded in this process (NumPy imported first) with the
    threadpoolctl keys of :data:`_BLAS_KEYS` it reports; empty without threadpoolctl."""
    from prism_core.kernel.threads import controllers

    _load_numpy()
    try:
        pools = [controller.info() for controller in controllers()]
    except Exception:
        return []
    return [
        {key: pool[key] for key in _BLAS_KEYS if key in pool}
        for pool in pools
        if pool.get("user_api") in ("blas", "openmp")
    ]


def blas_threads(limit: int) -> contextlib.AbstractContextManager[object]:
    """Limit the BLAS thread pools to ``limit`` threads inside a ``with`` block, which gets
    ``threadpoolctl.threadpool_limits(limits=limit, user_api="blas")``'s limiter: applied on
    entering, undone on leaving; environment variables (``OMP_NUM_THREADS``) are not touched.
    ``ValueError`` for a limit below 1, ``ImportError`` without threadpoolctl."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"a BLAS thread limit is a positive integer, not {limit!r}")
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

    @contextlib.contextmanager
    def limited() -> Iterator[object]:
        _load_numpy()
        with threadpoolctl.threadpool_limits(limits=limit, user_api="blas") as limiter:
            yield limiter

    return limited()
