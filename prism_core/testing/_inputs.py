"""The arrays the conformance suite calls ops with: the sizes, a maker of arrays of one dtype,
and the cases of every layout of ``_standard.SHAPES`` that the families' case modules
(``_cases``) share.  It imports neither the suite nor the families, so both can import it."""

from __future__ import annotations

from typing import Any

__all__ = [
    "N1",
    "N2",
    "Case",
    "Maker",
    "keyword_arrays",
    "matrix_cases",
    "one_arg_cases",
    "vector_cases",
]

#: Sizes large enough for the usual "worth a device transfer" thresholds of ``can_run``.
N1 = 4096
N2 = 64

#: The arguments of one call: ``(args, kwargs)``.
Case = tuple[tuple[Any, ...], dict[str, Any]]


class Maker:
    """Arrays of one dtype, the same numbers every time."""

    def __init__(self, dtype: str) -> None:
        import numpy as np

        self.np = np
        self.rng = np.random.default_rng(20261121)
        self.dt = np.dtype(dtype)
        #: The real dtype of the same precision (float32 for complex64).
        self.real = (
            np.dtype("float32")
            if self.dt == np.dtype("complex64")
            else (np.dtype("float64") if self.dt.kind == "c" else self.dt)
        )

    def __call__(self, *shape: int, positive: bool = False) -> Any:
        np, rng = self.np, self.rng
        if positive:  # ints: 1 or 2; floats in [1, 3); complex with a positive real part
            x = rng.uniform(1.0, 3.0, shape)
            imag = 0.5 * rng.uniform(-1.0, 1.0, shape)
        else:  # ints: small, both signs
            x = rng.normal(size=shape)
            imag = rng.normal(size=shape)
        if self.dt.kind == "c":
            x = x + 1j * imag
        return np.ascontiguousarray(x.astype(self.dt))

    def strided(self, *shape: int, positive: bool = False) -> Any:
        """Non-contiguous: every other element of the last axis of a larger array."""
        wide = self(*shape[:-1], 2 * shape[-1], positive=positive)
        return wide[..., ::2]

    def fortran(self, *shape: int, positive: bool = False) -> Any:
        return self.np.asfortranarray(self(*shape, positive=positive))

    def well_conditioned(self, n: int) -> Any:
        return self(n, n) + (n + 4) * self.np.eye(n, dtype=self.dt)

    def hermitian(self, a: Any) -> Any:
        return a + a.conj().T


def vector_cases(m: Maker, positive: bool = False) -> dict[str, Any]:
    """One array per shape: vectors, and a 2-D array in Fortran order."""
    return {
        "standard": m(N1, positive=positive),
        "empty": m(0, positive=positive),
        "one": m(1, positive=positive),
        "odd": m(N1 + 1, positive=positive),
        "strided": m.strided(N1, positive=positive),
        "fortran": m.fortran(N2, N2, positive=positive),
    }


def matrix_cases(m: Maker, positive: bool = False) -> dict[str, Any]:
    return {
        "standard": m(N2, N2, positive=positive),
        "empty": m(0, N2, positive=positive),
        "one": m(1, 1, positive=positive),
        "odd": m(65, 67, positive=positive),
        "strided": m.strided(N2, N2, positive=positive),
        "fortran": m.fortran(N2, N2, positive=positive),
    }


def one_arg_cases(m: Maker, positive: bool = False) -> dict[str, Case]:
    """:func:`vector_cases`, each the one argument of a call: ``{shape: ((x,), {})}``."""
    return {s: ((x,), {}) for s, x in vector_cases(m, positive=positive).items()}


def keyword_arrays(m: Maker) -> tuple[Any, Any, Any, Any]:
    """The arrays most keyword cases are made of, drawn in this order: a vector ``x`` of
    ``N1``, two ``N2`` by ``N2`` matrices ``a`` and ``b``, and a ``cube`` of shape
    ``(8, 8, N2)``."""
    x, a, b = m(N1), m(N2, N2), m(N2, N2)
    return x, a, b, m(8, 8, N2)
