"""The conformance suite's inputs for the linalg family of the Array API (see ``__init__``).

Every op has a case per layout of ``_standard.SHAPES`` where it is defined on it (``outer``
takes vectors, which have no Fortran order), and ``stack`` where it takes stacks of matrices.
The determinants are of matrices near the identity (``well_conditioned`` scaled down), so that
they neither overflow in float32 nor underflow.  :func:`keyword_cases` exercises every keyword
argument the rows document.
"""

from __future__ import annotations

from typing import Any

from prism_core.testing._inputs import N1, N2, Case, Maker

__all__ = ["DTYPES", "input_cases", "keyword_cases"]

_ALL = ("float64", "float32", "complex128", "complex64", "int64", "int32")
_FLOATING = ("float64", "float32", "complex128", "complex64")

#: Op -> the dtypes the suite checks it in.
DTYPES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("matrix_transpose", "tensordot", "vecdot", "linalg.cross", "linalg.outer"), _ALL
    ),
    **dict.fromkeys(("linalg.diagonal", "linalg.trace"), _ALL),
    **dict.fromkeys(
        ("linalg.det", "linalg.slogdet", "linalg.eigvalsh", "linalg.svdvals"), _FLOATING
    ),
    **dict.fromkeys(("linalg.matrix_rank", "linalg.pinv", "linalg.matrix_power"), _FLOATING),
}


def _matrices(m: Maker) -> dict[str, Any]:
    """One matrix (or stack) per shape."""
    return {
        "standard": m(N2, N2),
        "empty": m(0, N2),
        "one": m(1, 1),
        "odd": m(65, 67),
        "strided": m.strided(N2, N2),
        "fortran": m.fortran(N2, N2),
        "stack": m(8, 5, 7),
    }


def _near_identity(m: Maker, n: int) -> Any:
    """A well-conditioned ``n`` by ``n`` matrix whose determinant is of order one."""
    return m.well_conditioned(n) / (n + 4)


def _squares(m: Maker) -> dict[str, Any]:
    """Square matrices near the identity, per shape."""
    np = m.np
    stack = np.stack([_near_identity(m, 7) for _ in range(5)])
    return {
        "standard": _near_identity(m, N2),
        "empty": _near_identity(m, 0),
        "one": _near_identity(m, 1),
        "odd": _near_identity(m, 65),
        "strided": _near_identity(m, 2 * N2)[::2, ::2],
        "fortran": np.asfortranarray(_near_identity(m, N2)),
        "stack": stack,
    }


def _hermitian(m: Maker) -> dict[str, Any]:
    """Real symmetric or complex Hermitian matrices, per shape."""
    np = m.np
    cases = {s: m.hermitian(x) for s, x in _squares(m).items() if s != "stack"}
    cases["strided"] = m.hermitian(m.well_conditioned(2 * N2))[::2, ::2]
    cases["fortran"] = np.asfortranarray(m.hermitian(m.well_conditioned(N2)))
    x = m(5, 7, 7)
    cases["stack"] = x + np.swapaxes(x.conj(), -1, -2)
    return cases


def input_cases(op: str, m: Maker) -> dict[str, Case] | None:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``None`` for another family's op."""
    if op not in DTYPES:
        return None
    if op in ("matrix_transpose", "linalg.diagonal", "linalg.trace"):
        return {s: ((x,), {}) for s, x in _matrices(m).items()}
    if op in ("linalg.svdvals", "linalg.matrix_rank", "linalg.pinv"):
        return {s: ((x,), {}) for s, x in _matrices(m).items()}
    if op in ("linalg.det", "linalg.slogdet"):
        return {s: ((x,), {}) for s, x in _squares(m).items()}
    if op == "linalg.matrix_power":
        return {s: ((x, 3), {}) for s, x in _squares(m).items()}
    if op == "linalg.eigvalsh":
        return {s: ((x,), {}) for s, x in _hermitian(m).items()}
    if op == "tensordot":  # axes=2: x1's last two axes against x2's first two
        return {
            "standard": ((m(N2, 8, 8), m(8, 8, N2)), {}),
            "empty": ((m(0, 8, 8), m(8, 8, 3)), {}),
            "one": ((m(1, 1, 1), m(1, 1, 1)), {}),
            "odd": ((m(65, 3, 5), m(3, 5, 67)), {}),
            "strided": ((m.strided(N2, 8, 8), m.strided(8, 8, N2)), {}),
            "fortran": ((m.fortran(N2, 8, 8), m.fortran(8, 8, N2)), {}),
        }
    if op == "vecdot":
        return {
            "standard": ((m(N2, N2), m(N2, N2)), {}),
            "empty": ((m(N2, 0), m(N2, 0)), {}),
            "one": ((m(1), m(1)), {}),
            "odd": ((m(65, 67), m(67)), {}),  # broadcast: 65 vectors against one
            "strided": ((m.strided(N2, N2), m.strided(N2, N2)), {}),
            "fortran": ((m.fortran(N2, N2), m.fortran(N2, N2)), {}),
            "stack": ((m(8, 1, 5, 7), m(3, 1, 7)), {}),
        }
    if op == "linalg.cross":  # 3-element vectors along the last axis
        return {
            "standard": ((m(N1, 3), m(N1, 3)), {}),
            "empty": ((m(0, 3), m(0, 3)), {}),
            "one": ((m(3), m(3)), {}),
            "odd": ((m(65, 3), m(3)), {}),  # broadcast: 65 vectors against one
            "strided": ((m.strided(N1, 3), m.strided(N1, 3)), {}),
            "fortran": ((m.fortran(N1, 3), m.fortran(N1, 3)), {}),
        }
    # linalg.outer: vectors only, so no Fortran order
    return {
        "standard": ((m(N1), m(N2)), {}),
        "empty": ((m(0), m(N2)), {}),
        "one": ((m(1), m(1)), {}),
        "odd": ((m(65), m(67)), {}),
        "strided": ((m.strided(N1), m.strided(N2)), {}),
    }


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]] | None:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m`` (of the
    op's first dtype): ``{keyword: [(args, kwargs), ...]}``; ``None`` for another family's op
    (``{}`` for one of this family without keywords)."""
    if op not in DTYPES:
        return None
    np = m.np
    a, b = m(N2, N2), m(N2, N2)
    if op == "tensordot":
        return {
            "axes": [
                ((a, b), {"axes": 1}),
                ((m(N2, 8, 8), m(8, N2, 8)), {"axes": ((1, 2), (0, -1))}),
                ((m(8, 8), m(8, 8)), {"axes": 0}),
            ]
        }
    if op == "vecdot":
        return {"axis": [((a, b), {"axis": -2}), ((m(4, N2, N2), a), {"axis": -1})]}
    if op == "linalg.cross":
        return {
            "axis": [((m(3, N1), m(3, N1)), {"axis": -2}), ((m(4, 3, N2), m(3, N2)), {"axis": -2})]
        }
    if op in ("linalg.diagonal", "linalg.trace"):
        offsets: list[Case] = [((a,), {"offset": 1}), ((m(8, 5, 7),), {"offset": -3})]
        if op == "linalg.diagonal":
            return {"offset": offsets}
        ints = Maker("int32")(N2, N2)
        return {
            "offset": offsets,
            "dtype": [((ints,), {"dtype": "float64"}), ((a,), {"dtype": "complex128"})],
        }
    if op in ("linalg.matrix_rank", "linalg.pinv"):
        # Singular values 1 (8 of them) and 0.01 (the other 56): ranks 8 and 64 by rtol.
        u, _ = np.linalg.qr(m(N2, N2))
        v, _ = np.linalg.qr(m(N2, N2))
        scales = np.where(np.arange(N2) < 8, 1.0, 0.01).astype(m.real)
        low = (u * scales) @ v.conj().T
        return {
            "rtol": [
                ((low,), {"rtol": 0.1}),
                ((low,), {"rtol": 1e-3}),
                ((m(3, 8, 8),), {"rtol": np.array([0.1, 0.5, 0.9])}),
            ]
        }
    return {}
