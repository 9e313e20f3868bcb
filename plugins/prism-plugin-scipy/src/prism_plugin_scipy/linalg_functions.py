"""The scipy plugin's variants of the Array API's ``linalg`` functions that prism-core declares
as a table: ``linalg.det``, ``linalg.eigvalsh``, ``linalg.svdvals`` and
``linalg.pinv``, the ones ``scipy.linalg`` has (it has no ``slogdet``, ``matrix_rank``,
``matrix_power`` or ``trace``, and its ``cross``/``outer`` would be NumPy's).

Each takes what its ``can_run`` (``variants.takes_matrix``) accepts, one 2-D matrix of a LAPACK
dtype, and hands everything else to prism-core's NumPy reference with the same arguments, as
``ops.py`` does: stacks of matrices, NaN or infinity (which LAPACK would spread or reject),
empty matrices, a non-square matrix where one is needed (NumPy's ``LinAlgError``), and for
``pinv`` an array ``rtol`` (``scipy.linalg.pinv`` takes one number).  The finiteness is checked
here once, so SciPy's own check is switched off (``check_finite=False``).

Priority :data:`~prism_plugin_scipy.variants.PRIORITY_NAMED`: the same LAPACK routines as
NumPy's, not measured faster; they run where the ``scipy`` backend is named.

SciPy-free at import: the implementations are named lazily and import SciPy when called.
"""

from __future__ import annotations

from typing import Any

from prism_core.extending import Variant

__all__ = ["det", "eigvalsh", "pinv", "svdvals", "variants"]

_HERE = "prism_plugin_scipy.linalg_functions"


def _lapack_matrix(x: Any, square: bool) -> bool:
    """Whether SciPy computes ``x``: a plain, finite, non-empty 2-D NumPy array of a LAPACK
    dtype (square where ``square``)."""
    import numpy as np

    from .ops import LAPACK_DTYPES, _plain

    if not (_plain(x) and x.ndim == 2 and x.dtype in LAPACK_DTYPES and x.size):
        return False
    if square and x.shape[0] != x.shape[1]:
        return False
    return bool(np.isfinite(x).all())


def det(x: Any, /) -> Any:
    """``scipy.linalg.det`` (LU by ``getrf``), in ``x``'s type as NumPy's."""
    if not _lapack_matrix(x, square=True):
        import numpy as np

        return np.linalg.det(x)
    import scipy.linalg

    return x.dtype.type(scipy.linalg.det(x, check_finite=False))


def eigvalsh(x: Any, /) -> Any:
    """``scipy.linalg.eigvalsh`` of the lower triangle, as NumPy reads it."""
    if not _lapack_matrix(x, square=True):
        import numpy as np

        return np.linalg.eigvalsh(x)
    import scipy.linalg

    return scipy.linalg.eigvalsh(x, lower=True, check_finite=False)


def svdvals(x: Any, /) -> Any:
    """``scipy.linalg.svdvals`` (``gesdd`` without vectors)."""
    if not _lapack_matrix(x, square=False):
        from prism_core.reference import implementation

        return implementation("linalg.svdvals")(x)
    import scipy.linalg

    return scipy.linalg.svdvals(x, check_finite=False)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """``scipy.linalg.pinv`` with the standard's relative ``rtol`` (SciPy's is relative too,
    with the same default ``max(M, N) * eps``); ``atol`` 0."""
    import numpy as np

    if not _lapack_matrix(x, square=False) or (rtol is not None and np.ndim(rtol) != 0):
        from prism_core.reference import implementation

        return implementation("linalg.pinv")(x, rtol=rtol)
    import scipy.linalg

    if rtol is None:
        rtol = max(x.shape) * np.finfo(x.dtype).eps
    elif isinstance(rtol, bool) or np.asarray(rtol).dtype.kind not in "iuf":
        from prism_core.reference import implementation

        return implementation("linalg.pinv")(x, rtol=rtol)  # its TypeError, naming rtol
    return scipy.linalg.pinv(x, atol=0.0, rtol=float(rtol), check_finite=False)


def variants() -> list[Variant]:
    """This module's variants, all on the ``scipy`` backend."""
    from .variants import PRIORITY_NAMED, takes_matrix

    return [
        Variant(
            op,
            f"{_HERE}:{op.partition('.')[2]}",
            backend="scipy",
            requires={"kind": "cpu"},
            priority=PRIORITY_NAMED,
            can_run=takes_matrix,
            name=f"scipy.{op}",
        )
        for op in ("linalg.det", "linalg.eigvalsh", "linalg.svdvals", "linalg.pinv")
    ]
