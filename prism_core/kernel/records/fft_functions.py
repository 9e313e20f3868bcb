"""The Array API's ``fft`` extension, declared as data: the transforms Prism did not
have (``fftn``, ``irfft``, ``hfft``, ...) and ``fftfreq``, ``rfftfreq``, ``fftshift``,
``ifftshift``.

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and
``op_examples``, and no array library (the examples import NumPy when called).

``fft.fft``, ``fft.ifft`` and ``fft.rfft`` are older than the table
(``kernel/dispatch/catalogue.py``).
"""

from __future__ import annotations

from prism_core.kernel.op_examples import Examples
from prism_core.kernel.oprecord import REAL_FLOATING, OpRecord

__all__ = ["ROWS"]

#: Where the NumPy references that are not NumPy's own functions are.
_NP = "prism_core._builtin.numpy_fft"
_1D = '(x, /, *, n=None, axis=-1, norm="backward")'
_ND = '(x, /, *, s=None, axes=None, norm="backward")'
_FREQUENCIES = "(n, /, *, d=1.0, dtype=None, device=None)"
#: What every transform says of ``norm``.
_NORM = (
    "``norm`` is ``'backward'`` (no scaling of the forward transform, ``1/n`` of the inverse), "
    "``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` of the forward one); "
    "another is a ``ValueError``."
)
#: What the one-dimensional transforms say of ``axis`` and of the result's precision.
_AXIS = (
    "An ``axis`` out of range is NumPy's ``AxisError`` (a ``ValueError`` and an "
    "``IndexError``), fewer than one point a ``ValueError``.  The result keeps ``x``'s "
    "precision (single in, single out: NumPy 1, which computes in double, is cast back); "
    "integers are transformed in double, as NumPy does.  " + _NORM
)
#: What the n-dimensional transforms say of ``s`` and ``axes`` (the standard's rules).
_AXES = (
    "``axes`` defaults to every axis; ``s[i]`` is the size along ``axes[i]`` (``-1``: the "
    "input's), cropping or zero-padding first.  As the standard requires, ``s`` needs ``axes`` "
    "(NumPy's old default for it, the last ``len(s)`` axes, is a ``ValueError`` saying so), "
    "``len(s) == len(axes)``, each size is ``-1`` or at least 1 and each axis appears once (the "
    "standard leaves repeats to the library; NumPy would transform twice): a broken rule is a "
    "``ValueError`` naming ``s`` or ``axes``, an axis out of range NumPy's ``AxisError``.  The "
    "result keeps ``x``'s precision (NumPy 1 is cast back); integers are transformed in "
    "double.  " + _NORM
)
#: What the frequency functions say of their arguments.
_FREQUENCY_ARGS = (
    "``n`` must be an int >= 1 and ``d`` a non-zero real number (``ValueError``; a ``d`` that "
    "is no number is a ``TypeError``).  ``dtype`` is a real floating-point type (float64 when "
    "``None``; the values are computed in float64 and rounded to it), another a ``TypeError``.  "
    "``device`` is where: ``None`` (the backend's default), ``'cpu'``, a backend's own device, "
    "or Prism's description of a device; a backend that cannot create there raises "
    "``ValueError`` naming the device and what it accepts."
)
#: What the shifts say of ``axes``.
_SHIFT_AXES = (
    "``axes`` is an int, a sequence of ints or ``None`` (every axis); any dtype, the result of "
    "``x``'s shape and dtype (a copy of a 0-d ``x``, where NumPy's fails).  An axis out of "
    "range is NumPy's ``AxisError`` naming the function (NumPy's says ``tuple index out of "
    "range``); a repeated axis is rolled twice, as NumPy does."
)


def _vector(n: int, dtype: str, batch: int | None) -> tuple[object, ...]:
    """A vector of n standard normal numbers, seeded by n (``fft.fft``'s ``examples``)."""
    import numpy as np

    return (np.random.default_rng(n).standard_normal(n).astype(dtype),)


def _fft_bytes(n: int, dtype: str, batch: int | None) -> int:
    """The vector's bytes and its complex transform's."""
    import numpy as np

    return n * np.dtype(dtype).itemsize + n * np.result_type(dtype, np.complex64).itemsize


#: The example arguments of ``prism bench`` and ``prism.tune(op, sizes=...)``.
_FFT = Examples(
    make=_vector,
    nbytes=_fft_bytes,
    size="a vector of n",
    quick=(256, 16384, 1 << 20),
    full=(2**4, 2**8, 2**12, 2**16, 2**20),
    axis="number of elements n",
)

ROWS: tuple[OpRecord, ...] = (
    # -- the first ops Prism had ---------------------------------------------------------------
    OpRecord(
        "fft.fft",
        '(x, /, *, n=None, axis=-1, norm="backward")',
        """the one-dimensional discrete Fourier transform along ``axis``, as the Array API's
        ``fft.fft``: ``n`` crops or zero-pads that axis first, ``norm`` is ``"backward"``,
        ``"ortho"`` or ``"forward"``. float32 and complex64 give complex64, other types
        complex128.""",
        (0,),
        "own",
        "array",
        "prism_core._builtin.numpy_fft:fft",
        dtypes=("complex128", "complex64", "float64", "float32"),
        examples=_FFT,
        split="along",
    ),
    OpRecord(
        "fft.ifft",
        '(x, /, *, n=None, axis=-1, norm="backward")',
        """the one-dimensional inverse discrete Fourier transform along ``axis``, as the Array
        API's ``fft.ifft``: ``n`` crops or zero-pads that axis first, ``norm`` is
        ``"backward"``, ``"ortho"`` or ``"forward"``. float32 and complex64 give complex64,
        other types complex128.""",
        (0,),
        "own",
        "array",
        "prism_core._builtin.numpy_fft:ifft",
        dtypes=("complex128", "complex64", "float64", "float32"),
        split="along",
    ),
    OpRecord(
        "fft.rfft",
        '(x, /, *, n=None, axis=-1, norm="backward")',
        """the one-dimensional discrete Fourier transform of real input (the ``n // 2 + 1``
        non-negative frequencies) along ``axis``, as the Array API's ``fft.rfft``: ``n`` crops
        or zero-pads that axis first, ``norm`` is ``"backward"``, ``"ortho"`` or ``"forward"``.
        ``x`` must be real; float32 gives complex64, other types complex128.""",
        (0,),
        "own",
        "array",
        "prism_core._builtin.numpy_fft:rfft",
        dtypes=REAL_FLOATING,
        split="along",
    ),
    # -- n-dimensional transforms --------------------------------------------------------------
    OpRecord(
        "fft.fftn",
        _ND,
        "the n-dimensional discrete Fourier transform of ``x`` over ``axes``.  The standard "
        "defines it for complex ``x``; real ``x`` is transformed as NumPy does (float32 to "
        "complex64, float64 to complex128).  With no axis to transform (``axes=()``, a 0-d "
        "``x``) the result is a copy of ``x`` in that complex type (NumPy returns ``x`` "
        "itself).  " + _AXES,
        (0,),
        "own",
        "array",
        f"{_NP}:fftn",
        dtypes=("complex128", "complex64", "float64", "float32"),
    ),
    OpRecord(
        "fft.ifftn",
        _ND,
        "the n-dimensional inverse discrete Fourier transform of ``x`` over ``axes`` "
        "(``ifftn(fftn(x)) == x`` to rounding).  The standard defines it for complex ``x``; "
        "real ``x`` is transformed as NumPy does.  With no axis to transform the result is a "
        "copy of ``x`` in the complex type.  " + _AXES,
        (0,),
        "own",
        "array",
        f"{_NP}:ifftn",
        dtypes=("complex128", "complex64", "float64", "float32"),
    ),
    OpRecord(
        "fft.rfftn",
        _ND,
        "the n-dimensional discrete Fourier transform of real ``x`` over ``axes``: the last of "
        "them keeps its ``s[-1] // 2 + 1`` non-negative frequencies.  Complex ``x`` is a "
        "``TypeError`` and ``axes=()`` a ``ValueError``.  " + _AXES,
        (0,),
        "own",
        "array",
        f"{_NP}:rfftn",
        dtypes=REAL_FLOATING,
    ),
    OpRecord(
        "fft.irfftn",
        _ND,
        "the inverse of ``rfftn``: the real array whose n-dimensional half spectrum ``x`` is "
        "(real output; ``x`` holds the non-negative frequencies of the last of ``axes``).  "
        "``s`` gives the output's sizes; the last defaults to ``2 * (m - 1)``, ``m`` the "
        "input's length along that axis, and ``-1`` there means the same (all of the input is "
        "used, as the standard says; NumPy 2 would make the output ``m`` long).  ``axes=()`` "
        "is a ``ValueError``.  " + _AXES,
        (0,),
        "own",
        "array",
        f"{_NP}:irfftn",
        dtypes=("complex128", "complex64"),
    ),
    # -- one-dimensional transforms of half spectra --------------------------------------------
    OpRecord(
        "fft.irfft",
        _1D,
        "the inverse of ``rfft`` along ``axis``: the real signal of ``n`` points (``2 * (m - "
        "1)`` by default, ``m`` the length of ``x`` along ``axis``) whose non-negative "
        "frequencies ``x`` holds, cropped or zero-padded to ``n // 2 + 1`` first (an odd ``n`` "
        "gives an odd length).  Real ``x`` is read as complex, as NumPy does.  " + _AXIS,
        (0,),
        "own",
        "array",
        f"{_NP}:irfft",
        dtypes=("complex128", "complex64"),
    ),
    OpRecord(
        "fft.hfft",
        _1D,
        "the discrete Fourier transform of a signal with Hermitian symmetry given by its first "
        "half ``x`` along ``axis``: real output of ``n`` points (``2 * (m - 1)`` by default, "
        "``m`` the length of ``x`` along ``axis``), ``x`` cropped or zero-padded to ``n // 2 + "
        "1`` first.  " + _AXIS,
        (0,),
        "own",
        "array",
        f"{_NP}:hfft",
        dtypes=("complex128", "complex64"),
    ),
    OpRecord(
        "fft.ihfft",
        _1D,
        "the inverse of ``hfft`` along ``axis``: the ``n // 2 + 1`` non-negative frequencies "
        "of the inverse transform of the real signal ``x`` (``n`` its length by default; "
        "cropped or zero-padded to ``n`` first).  Complex ``x`` is a ``TypeError``.  " + _AXIS,
        (0,),
        "own",
        "array",
        f"{_NP}:ihfft",
        dtypes=REAL_FLOATING,
    ),
    # -- sample frequencies: no array argument -------------------------------------------------
    OpRecord(
        "fft.fftfreq",
        _FREQUENCIES,
        "the sample frequencies of a transform of ``n`` points ``d`` apart, as the Array API's "
        "``fft.fftfreq``: ``[0, 1, ..., ceil(n / 2) - 1, -floor(n / 2), ..., -1] / (d * n)``, "
        "a 1-D array of ``n``.  " + _FREQUENCY_ARGS,
        (),
        "create",
        "array",
        f"{_NP}:fftfreq",
        dtypes=REAL_FLOATING,
        creation="float",
    ),
    OpRecord(
        "fft.rfftfreq",
        _FREQUENCIES,
        "the non-negative sample frequencies of ``rfft`` and ``irfft`` for ``n`` points ``d`` "
        "apart, as the Array API's ``fft.rfftfreq``: ``[0, 1, ..., n // 2] / (d * n)``, a 1-D "
        "array of ``n // 2 + 1``.  " + _FREQUENCY_ARGS,
        (),
        "create",
        "array",
        f"{_NP}:rfftfreq",
        dtypes=REAL_FLOATING,
        creation="float",
    ),
    # -- shifts ------------------------------------------------------------------------------------
    OpRecord(
        "fft.fftshift",
        "(x, /, *, axes=None)",
        "``x`` with the zero-frequency term moved to the centre: each of ``axes`` rolled by "
        "half its length (``n // 2``).  " + _SHIFT_AXES,
        (0,),
        "copy",
        "array",
        f"{_NP}:fftshift",
    ),
    OpRecord(
        "fft.ifftshift",
        "(x, /, *, axes=None)",
        "the inverse of ``fftshift``: each of ``axes`` rolled back by ``n // 2`` (the same as "
        "``fftshift`` for even lengths).  " + _SHIFT_AXES,
        (0,),
        "copy",
        "array",
        f"{_NP}:ifftshift",
    ),
)
