"""The conformance suite's inputs for the linalg family of the Array API (see ``__init__``).

Every op has a case per layout of ``_standard.SHAPES`` where it is defined on it (``outer``
takes vectors, which have no Fortran order), and ``stack`` where it takes stacks of matrices.
The products (``matmul``, ``dot``, ``einsum``) take pairs of matrices; the inverses, solutions
and decompositions well-conditioned square matrices (Hermitian positive definite ones for
``eigh`` and ``cholesky``).  The determinants are of matrices near the identity
(``well_conditioned`` scaled down), so that they neither overflow in float32 nor underflow.
:func:`keyword_cases` exercises every keyword argument the records document.
"""

from __future__ import annotations

from typing import Any

from prism_core.testing._inputs import (
    N1,
    N2,
    Case,
    Maker,
    keyword_arrays,
    matrix_cases,
)

__all__ = ["input_cases", "keyword_cases"]

#: The ops Prism had first (their cases: :func:`_products_cases`).
_PRODUCTS = (
    "matmul", "dot", "einsum", "linalg.inv", "linalg.solve", "linalg.svd", "linalg.eig",
    "linalg.eigh", "linalg.qr", "linalg.cholesky", "linalg.norm", "linalg.vector_norm",
    "linalg.matrix_norm",
)  # fmt: skip
#: The other ops of the family.
_OTHERS = (
    "matrix_transpose", "tensordot", "vecdot", "linalg.cross", "linalg.outer",
    "linalg.diagonal", "linalg.trace", "linalg.det", "linalg.slogdet", "linalg.eigvalsh",
    "linalg.svdvals", "linalg.matrix_rank", "linalg.pinv", "linalg.matrix_power",
)  # fmt: skip


def _pairs(m: Maker) -> dict[str, tuple[Any, Any]]:
    """Operands of matrix products, per shape."""
    return {
        "standard": (m(N2, N2), m(N2, N2)),
        "empty": (m(0, N2), m(N2, N2)),
        "one": (m(1, 1), m(1, 1)),
        "odd": (m(65, 67), m(67, 65)),
        "strided": (m.strided(N2, N2), m.strided(N2, N2)),
        "fortran": (m.fortran(N2, N2), m.fortran(N2, N2)),
    }


def _well_conditioned(m: Maker) -> dict[str, Any]:
    """Well-conditioned square matrices, per shape."""
    return {
        "standard": m.well_conditioned(N2),
        "empty": m.well_conditioned(0),
        "one": m.well_conditioned(1),
        "odd": m.well_conditioned(65),
        "strided": m.well_conditioned(2 * N2)[::2, ::2],
        "fortran": m.np.asfortranarray(m.well_conditioned(N2)),
    }


def _products_cases(op: str, m: Maker) -> dict[str, Case]:
    """The cases of the ops of :data:`_PRODUCTS`."""
    if op in ("matmul", "dot"):
        return {s: (pair, {}) for s, pair in _pairs(m).items()}
    if op == "einsum":
        return {s: (("ij,jk->ik", *pair), {}) for s, pair in _pairs(m).items()}
    if op == "linalg.inv" or op == "linalg.eig":
        return {s: ((x,), {}) for s, x in _well_conditioned(m).items()}
    if op in ("linalg.eigh", "linalg.cholesky"):  # Hermitian; positive definite, as
        # well_conditioned's diagonal outweighs the rest
        cases: dict[str, Case] = {
            s: ((m.hermitian(x),), {}) for s, x in _well_conditioned(m).items()
        }
        cases["strided"] = ((m.hermitian(m.well_conditioned(2 * N2))[::2, ::2],), {})
        cases["fortran"] = ((m.np.asfortranarray(m.hermitian(m.well_conditioned(N2))),), {})
        return cases
    if op == "linalg.solve":
        squares = _well_conditioned(m)
        rights = {
            "standard": m(N2, N2),
            "empty": m(0, 0),
            "one": m(1, 1),
            "odd": m(65, 3),
            "strided": m.strided(N2, N2),
            "fortran": m.fortran(N2, N2),
        }
        cases = {s: ((squares[s], rights[s]), {}) for s in squares}
        cases["vector"] = ((m.well_conditioned(N2), m(N2)), {})  # 1-D: a vector, not a matrix
        return cases
    # linalg.svd, linalg.qr and the norms
    return {s: ((x,), {}) for s, x in matrix_cases(m).items()}


def _products_keywords(op: str, m: Maker) -> dict[str, list[Case]]:
    """The keyword cases of the ops of :data:`_PRODUCTS`."""
    x, a, b, cube = keyword_arrays(m)
    if op == "einsum":
        return {
            "dtype": [(("ij,jk->ik", a, b), {"dtype": "complex128"})],
            "optimize": [
                (("ij,jk,kl->il", a, b, a), {"optimize": True}),
                (("ij,jk,kl->il", a, b, a), {"optimize": "greedy"}),
            ],
        }
    if op == "linalg.qr":
        return {"mode": [((m(65, 67),), {"mode": "complete"}), ((m(67, 65),), {"mode": "reduced"})]}
    if op == "linalg.cholesky":
        return {"upper": [((m.hermitian(m.well_conditioned(N2)),), {"upper": True})]}
    if op == "linalg.norm":
        return {
            "ord": [((a,), {"ord": "nuc"}), ((x,), {"ord": 1}), ((a,), {"ord": float("inf")})],
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": (0, 2)})],
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"axis": 1, "keepdims": True})],
        }
    if op == "linalg.vector_norm":
        return {
            "axis": [((a,), {"axis": 1}), ((cube,), {"axis": (0, 2)})],
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"axis": -1, "keepdims": True})],
            "ord": [((x,), {"ord": o}) for o in (1, 0, 3, float("inf"), float("-inf"))],
        }
    if op == "linalg.matrix_norm":
        return {
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"keepdims": True})],
            "ord": [((a,), {"ord": o}) for o in ("nuc", 1, -1, 2, -2, float("inf"))],
        }
    if op == "linalg.svd":
        return {
            "full_matrices": [
                ((m(65, 67),), {"full_matrices": False}),
                ((a,), {"full_matrices": True}),
            ],
        }
    return {}  # matmul, dot, linalg.inv, linalg.solve, linalg.eig, linalg.eigh


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


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    if op in _PRODUCTS:
        return _products_cases(op, m)
    if op not in _OTHERS:
        return {}
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


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m`` (of the
    op's first dtype): ``{keyword: [(args, kwargs), ...]}``; ``{}`` for an op without
    keywords."""
    if op in _PRODUCTS:
        return _products_keywords(op, m)
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
