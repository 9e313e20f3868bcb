"""The conformance suite's inputs for the fft family of the Array API (see ``__init__``).

``fft.fft``, ``fft.ifft`` and ``fft.rfft`` take vectors of every layout but ``empty`` (no
transform of nothing).  The n-dimensional transforms and the shifts take arrays of every layout of
``_standard.SHAPES`` (``empty``: an empty batch, transformed along its non-empty axis) and
``sizes``, a call with ``s`` and ``axes``; the one-dimensional ones take signals (a size-one
one with ``n=1``: the default ``n`` of one point of a half spectrum is 0, which is an error).
The frequencies take no array: ``n`` (``standard``, ``one``) and ``d`` (``spacing``), in the
dtype checked.  :func:`keyword_cases` exercises every keyword argument the records document.
"""

from __future__ import annotations

from prism_core.testing._inputs import N1, N2, Case, Maker, keyword_arrays, one_arg_cases

__all__ = ["input_cases", "keyword_cases"]

_ONE_D = ("fft.fft", "fft.ifft", "fft.rfft")
_ND = ("fft.fftn", "fft.ifftn", "fft.rfftn", "fft.irfftn")
_HALF = ("fft.irfft", "fft.hfft")
_SHIFTS = ("fft.fftshift", "fft.ifftshift")
_FREQUENCIES = ("fft.fftfreq", "fft.rfftfreq")

def _arrays(m: Maker) -> dict[str, Case]:
    """One array per layout; the empty one transformed along its non-empty axis."""
    return {
        "standard": ((m(N2, N2),), {}),
        "empty": ((m(0, N2),), {"axes": (1,)}),
        "one": ((m(1, 1),), {}),
        "odd": ((m(65, 67),), {}),
        "strided": ((m.strided(N2, N2),), {}),
        "fortran": ((m.fortran(N2, N2),), {}),
        "sizes": ((m(N2, N2),), {"s": (N2 - 5, -1), "axes": (1, 0)}),
    }


def _signals(m: Maker, half: bool) -> dict[str, Case]:
    """Signals per layout; a half spectrum of one point needs ``n=1``."""
    return {
        "standard": ((m(N1),), {}),
        "empty": ((m(0, 8),), {}),
        "one": ((m(1),), {"n": 1} if half else {}),
        "odd": ((m(N1 + 1),), {"n": 2 * N1 + 1} if half else {}),
        "strided": ((m.strided(N1),), {}),
        "fortran": ((m.fortran(N2, N2),), {"axis": 0}),
    }


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    if op in _ONE_D:  # no transform of nothing
        return {s: c for s, c in one_arg_cases(m).items() if s != "empty"}
    if op in _ND:
        cases = _arrays(m)
        if op == "fft.irfftn":  # one point of a half spectrum: an output of 1 needs s
            cases["one"] = ((m(1, 1),), {"s": (1, 1), "axes": (0, 1)})
        return cases
    if op in _HALF:
        return _signals(m, half=True)
    if op == "fft.ihfft":
        return _signals(m, half=False)
    if op in _FREQUENCIES:
        return {
            "standard": ((N1,), {"dtype": m.dt}),
            "one": ((1,), {"dtype": m.dt}),
            "spacing": ((N1 + 1,), {"d": 0.25, "dtype": m.dt}),
        }
    if op not in _SHIFTS:
        return {}
    cases = _arrays(m)
    del cases["sizes"]
    cases["empty"] = ((m(0, N2),), {})
    cases["axes"] = ((m(65, 67),), {"axes": 1})
    return cases


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``; ``{}``
    for an op without keywords.  ``device`` is given as ``None`` (every backend's default): the
    devices a backend takes differ (``tests/test_array_api_fft.py`` checks ``"cpu"``)."""
    if op in _ONE_D:
        x, a, _, _ = keyword_arrays(m)
        return {
            "n": [((x,), {"n": N1 - 5}), ((x,), {"n": N1 + 5})],
            "axis": [((a,), {"axis": 0}), ((a,), {"axis": -2})],
            "norm": [((x,), {"norm": "ortho"}), ((x,), {"norm": "forward"})],
        }
    a, x = m(N2, N2), m(N1)
    cube = m(4, 8, N2)
    norms: list[Case] = [((a,), {"norm": "ortho"}), ((a,), {"norm": "forward"})]
    if op in _ND:
        return {
            "s": [((a,), {"s": (N2 + 3, 7), "axes": (0, 1)}), ((cube,), {"s": (5,), "axes": (1,)})],
            "axes": [((cube,), {"axes": (2, 0)}), ((cube,), {"axes": (-1,)})],
            "norm": norms,
        }
    if op in (*_HALF, "fft.ihfft"):
        return {
            "n": [((x,), {"n": N1 - 5}), ((x,), {"n": 2 * N1 + 5})],
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": -2})],
            "norm": [((x,), {"norm": "ortho"}), ((x,), {"norm": "forward"})],
        }
    if op in _FREQUENCIES:
        return {
            "d": [((N1,), {"d": 0.5}), ((65,), {"d": 3})],
            "dtype": [((N1,), {"dtype": m.dt}), ((N1,), {"dtype": "float32"})],
            "device": [((N1,), {"device": None})],
        }
    if op in _SHIFTS:
        return {
            "axes": [((cube,), {"axes": (0, 2)}), ((a,), {"axes": -1}), ((cube,), {"axes": None})]
        }
    return {}
