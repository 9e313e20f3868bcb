"""The ``mlx`` plugin: Apple's MLX (``mlx.core``) as a Prism backend, on the backend kit's
options for a library that is almost an Array API namespace; what is here is MLX's own: its
dtypes per device and the calls it must not take.  It imports no MLX until an op runs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import prism_core
from prism_core.backend_kit import Decline, NamespaceBackend, Target, adapters
from prism_core.hardware import RequirementMatch

#: Every dtype MLX has: no complex128.  Its float64 computes on the CPU only (Metal has none).
ALL_DTYPES = frozenset(
    {"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    | {"float16", "bfloat16", "float32", "float64", "complex64"}
)
#: The standard's functions mlx.core (0.32) lacks.
LACKS = {"copysign", "hypot", "nextafter", "nonzero", "signbit", "fft.hfft", "fft.ihfft"}
LACKS |= {f"linalg.{f}" for f in ("matrix_norm", "matrix_power", "matrix_rank", "vector_norm")}
LACKS |= {f"unique_{f}" for f in ("all", "counts", "inverse", "values")}
#: The standard's keywords mlx.core's functions lack.
KEYWORDS = {"astype": ("copy", "device"), "reshape": ("copy",), "diff": ("prepend", "append")}
KEYWORDS |= {"searchsorted": ("sorter",), "linalg.qr": ("mode",), "linalg.pinv": ("rtol",)}
KEYWORDS |= {"sum": ("dtype",), "prod": ("dtype",), "full": ("fill_value",)}
KEYWORDS |= {"full_like": ("fill_value",)}  # mlx.core's is vals, by position only
#: The dtype kinds mlx.core does not compute an op in: its LAPACK calls take real matrices,
#: its matmul floats; its trace sums integers in their own type (NumPy's in int64).
LINALG = ("cholesky", "det", "eigh", "eigvalsh", "inv", "pinv", "qr", "slogdet", "solve", "svd")
KINDS = {**{f"linalg.{op}": "c" for op in LINALG}, "linalg.svdvals": "c", "expm1": "c"}
KINDS |= dict.fromkeys(("matmul", "tensordot", "linalg.trace"), "biu")
#: Empty input: a 0x0 linalg.inv or .solve is a SIGFPE; all and prod differ from NumPy's.
EMPTY = frozenset({"linalg.inv", "linalg.solve", "all", "prod"})


def _decline(op: str) -> Decline:
    why = f"mlx.core.{op} (MLX 0.32) takes no such call, or computes it otherwise than NumPy"
    return Decline(why, kinds=KINDS.get(op, ""), keywords=KEYWORDS.get(op, ()), empty=op in EMPTY)


def _integral(dtype: Any) -> bool:
    return dtype is not None and prism_core.dtype(dtype).kind in "iu"


#: The calls no dtype, keyword or emptiness singles out: each ``can_run`` is true, or why not.
REFUSED: dict[str, Callable[..., bool | str]] = {
    "moveaxis": lambda *a, **k: tuple not in map(type, (*a, *k.values())) or "one axis only",
    "repeat": lambda x, repeats, **k: type(repeats) is int or "mlx.core.repeat: one count only",
    "vecdot": lambda a, b, **k: a.ndim == b.ndim or "mlx.core.vecdot does not broadcast",
    "linspace": lambda *a, dtype=None, **k: (
        not (complex in map(type, a) or _integral(dtype))
        or "mlx.core.linspace computes no complex numbers and rounds integers otherwise"
    ),
    "arange": lambda *a, dtype=None, **k: (
        float not in map(type, (*a, *k.values()))
        or not _integral(dtype)
        or "mlx.core.arange casts a float step to integers first"
    ),
    **dict.fromkeys(
        ("fft.fftn", "fft.ifftn", "fft.rfftn", "fft.irfftn"),
        lambda x, s=None, **k: -1 not in (s or ()) or "mlx.core.fft: no size -1",
    ),
}


# MLX factors a matrix that is not positive definite: LAPACK leaves the failed pivot <= 0.
def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    out = BACKEND.xp.linalg.cholesky(x, upper=upper)
    if not bool((BACKEND.xp.diagonal(out, axis1=-2, axis2=-1) > 0).all()):
        raise ValueError("mlx.core.linalg.cholesky: the matrix is not positive definite")
    return out


class MlxBackend(NamespaceBackend):
    """MLX on the CPU, and on the GPU of Apple silicon (Metal)."""

    name = "mlx"
    description = "Apple MLX (mlx.core) on the CPU, and on Apple silicon's GPU"
    drives = MappingProxyType({"kind": ("cpu", "gpu")})
    namespace = library = "mlx.core"  # mlx is a namespace package: mlx.core has __version__
    minimum = "0.32"
    distribution = "prism-plugin-mlx"
    installed_as = ("mlx",)  # availability from its metadata: prism doctor imports no MLX
    array_types = ("mlx.core:array",)  # taken by copy (transfer), as the kit's default
    targets = (
        Target("cpu", MappingProxyType({"kind": "cpu"})),
        Target("gpu", MappingProxyType({"vendor": "apple", "kind": "gpu"}), 10),
    )
    lazy = True  # MLX computes at mx.eval, and raises there
    streams = True  # one memory: each op runs inside mx.stream(mx.cpu) or mx.stream(mx.gpu)
    default_dtypes = MappingProxyType({"float": "float32", "int": "int32", "index": "uint32"})
    adapts = adapters.NUMPY_LIKE
    lacks = frozenset(LACKS)
    overrides = MappingProxyType({"linalg.cholesky": cholesky})
    # MLX's float64 sin, cos, exp and det are accurate to about float32's precision only.
    excludes = MappingProxyType({key: {"float64"} for key in ("sin", "cos", "exp", "linalg.det")})
    declines = MappingProxyType(
        {**{op: _decline(op) for op in {*KEYWORDS, *KINDS, *EMPTY}}, **REFUSED}
    )

    def dtypes(self, device: Any = None) -> frozenset[str]:
        return ALL_DTYPES - {"float64"} if getattr(device, "kind", "") == "gpu" else ALL_DTYPES

    def evaluate(self, out: Any) -> None:
        self.xp.eval(out)

    def can_drive(self, device: Any) -> RequirementMatch:
        """CPUs, and Apple's GPUs where MLX has Metal (or the device is simulated)."""
        match = super().can_drive(device)
        if not match or device.kind == "cpu":
            return match
        why = "MLX computes on Apple's GPUs only" if device.vendor != "apple" else None
        why = why or (None if prism_core.current_scope().simulated else gpu_unavailable())
        return match if why is None else RequirementMatch(False, (why,))

    def placement(self, op: str, target: Target) -> Any:
        kit = super().placement(op, target)  # GPU calls declined first where MLX has no Metal
        return kit if target.name == "cpu" else lambda *a, **k: gpu_unavailable() or kit(*a, **k)


@functools.cache
def gpu_unavailable() -> str | None:
    found = BACKEND.xp.is_available(BACKEND.xp.gpu)
    return None if found else "MLX has no GPU here: its Metal backend needs Apple silicon"


BACKEND = MlxBackend()


@prism_core.extending.hookimpl
def prism_plugin_info() -> dict[str, Any]:
    return {"description": "Apple MLX (mlx.core) as a Prism backend", "requires": ["mlx>=0.32"]}


@prism_core.extending.hookimpl
def prism_backends() -> list[MlxBackend]:
    return [BACKEND]


@prism_core.extending.hookimpl
def prism_variants() -> list[prism_core.extending.Variant]:
    return BACKEND.variants(set(prism_core.all_ops()))
