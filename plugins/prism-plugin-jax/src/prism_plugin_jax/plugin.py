"""The ``jax`` plugin: ``jax.numpy``, a namespace of the Array API standard, as a Prism backend.

``NamespaceBackend`` gives a variant of every op of the standard that ``jax.numpy`` has, with
Prism's semantics around it (NumPy's promotion, the reference's errors); what is here is what
is JAX's own: the dtypes it holds, where its arrays live, its quirks, and the ops beyond the
standard it has under NumPy's names.  Nothing here imports JAX until an op runs.  Its GPU is
NVIDIA's with ``jax-cuda12-plugin`` (or ``-cuda13-``), AMD's with ``jax-rocm7-plugin`` (or
``-rocm60-``), told from the installed distributions (``prism_plugin_jax.build``).
"""

from __future__ import annotations

import functools
import os
import sys
from types import MappingProxyType
from typing import Any

import prism_core
from prism_core.backend_kit import Decline, NamespaceBackend, Target
from prism_core.hardware import RequirementMatch
from prism_plugin_jax.build import JaxBuild, jax_build

#: Every dtype JAX has; without x64 (its default) it holds none of the 64-bit ones: it would
#: compute a float64 argument in float32, so it declares them not held instead.
ALL_DTYPES = frozenset(
    {"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    | {"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}
)
X64_ONLY = frozenset({"int64", "uint64", "float64", "complex128"})


def x64() -> bool:
    """Whether JAX computes in 64 bits: its config once imported, else the variable it reads."""
    jax = sys.modules.get("jax")
    if jax is not None:
        return bool(jax.config.jax_enable_x64)
    return os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true", "t", "yes", "y", "on")


@functools.cache
def jitted(name: str, *static: str) -> Any:
    """``jax.numpy``'s function ``name`` compiled whole with ``jax.jit``: the reductions made of
    several primitives run as one kernel, where ``jax.numpy`` runs them op by op
    (benchmarks/bench_jax.py measures where that pays)."""
    import jax
    import jax.numpy as jnp

    function: Any = jnp
    for part in name.split("."):
        function = getattr(function, part)
    return jax.jit(function, static_argnames=static)


def std(x: Any, /, **kwargs: Any) -> Any:
    return jitted("std", "axis", "correction", "keepdims")(x, **kwargs)


def var(x: Any, /, **kwargs: Any) -> Any:
    return jitted("var", "axis", "correction", "keepdims")(x, **kwargs)


def vector_norm(x: Any, /, **kwargs: Any) -> Any:
    return jitted("linalg.vector_norm", "axis", "keepdims", "ord")(x, **kwargs)


def _finite_or_raise(out: Any, given: Any, what: str) -> Any:
    """``out``, or an error where JAX answered a finite matrix with NaN or inf: the reference
    then says what is wrong, in its words (``Singular matrix``).  Not checked under
    ``choosing(check_errors="deferred")``: the check waits for the result (and cannot be
    traced by ``jax.jit``)."""
    import jax.numpy as jnp

    if prism_core.current_scope().check_errors == "deferred":
        return out
    if not bool(jnp.isfinite(out).all()) and bool(jnp.isfinite(given).all()):
        raise ValueError(f"jax.numpy.linalg.{what} returned non-finite values")
    return out


# JAX returns NaN and inf for a singular matrix where NumPy raises LinAlgError.
def inv(x: Any, /) -> Any:
    import jax.numpy as jnp

    return _finite_or_raise(jnp.linalg.inv(x), x, "inv")


def solve(x1: Any, x2: Any, /) -> Any:
    import jax.numpy as jnp

    return _finite_or_raise(jnp.linalg.solve(x1, x2), x1, "solve")


# JAX returns NaN for a matrix that is not positive definite.
def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    import jax.numpy as jnp

    return _finite_or_raise(jnp.linalg.cholesky(x, upper=upper), x, "cholesky")


# jax.numpy.take fills out-of-range indices (with the dtype's minimum) where NumPy raises.
def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    import jax.numpy as jnp

    size = x.size if axis is None else x.shape[axis]
    if indices.size and (int(indices.max()) >= size or int(indices.min()) < -size):
        raise IndexError("jax.numpy.take: an index is out of range")
    return jnp.take(x, indices, axis=axis)


# jax.numpy.linalg.eig is complex always; the reference's is real where every eigenvalue is
# (NumPy 2.4 and earlier), which prism_core.reference.eig_real_when_real says.
def eig(x: Any, /) -> Any:
    import jax.numpy as jnp

    from prism_core.backend_kit import EigResult
    from prism_core.reference import eig_real_when_real

    values, vectors = jnp.linalg.eig(x)
    if eig_real_when_real() and x.dtype.kind != "c" and not bool(jnp.any(values.imag)):
        return EigResult(values.real, vectors.real)
    return EigResult(values, vectors)


# jax.numpy.linalg.matrix_power answers a negative power of a singular matrix with inf.
def matrix_power(x: Any, n: int, /) -> Any:
    import jax.numpy as jnp

    return _finite_or_raise(jnp.linalg.matrix_power(x, n), x, "matrix_power")


# jax.numpy.transpose takes no negative axes; the standard's permute_dims does.
def permute_dims(x: Any, /, axes: tuple[int, ...]) -> Any:
    import jax.numpy as jnp

    return jnp.permute_dims(x, tuple(a % x.ndim if -x.ndim <= a < 0 else a for a in axes))


# jax.numpy.arange casts a float step to an integer dtype first (0.75 -> 0), as NumPy does;
# the standard, and Prism's reference, compute start + i * step, then cast.
def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, **kw: Any) -> Any:
    import jax.numpy as jnp

    floats = any(type(v) is float for v in (start, stop, step))
    if dtype is None or not floats or jnp.issubdtype(dtype, jnp.inexact):
        return jnp.arange(start, stop, step, dtype=dtype, **kw)
    return jnp.arange(start, stop, step, **kw).astype(dtype)


# jax.numpy.einsum has no dtype=: the operands are cast first, as NumPy's dtype= does.
def einsum(subscripts: str, /, *operands: Any, dtype: Any = None, **kwargs: Any) -> Any:
    import jax.numpy as jnp

    if dtype is not None:
        operands = tuple(jnp.asarray(o).astype(dtype) for o in operands)
    kwargs.pop("optimize", None)  # JAX picks the contraction order itself
    return jnp.einsum(subscripts, *operands)


def _int8(x: Any) -> Any:
    """A boolean array in int8: NumPy has no boolean loop for the ops that call this, and
    computes booleans in its smallest integer loop (jax.numpy: int32, or booleans).  Only
    booleans with booleans get here: the backend promotes mixed operands first."""
    import jax.numpy as jnp

    return x.astype(jnp.int8) if getattr(x, "dtype", None) == jnp.bool_ else x


def _in_int8(name: str) -> Any:
    def fn(*args: Any) -> Any:
        import jax.numpy as jnp

        return getattr(jnp, name)(*(_int8(a) for a in args))

    fn.__name__ = fn.__qualname__ = name
    return fn


# jax.numpy's integer division by zero gives -1 (all bits set); NumPy's gives 0.  Only
# integers pay for the check.
def floor_divide(x1: Any, x2: Any, /) -> Any:
    import jax.numpy as jnp

    out = jnp.floor_divide(_int8(x1), _int8(x2))
    return jnp.where(x2 == 0, 0, out) if jnp.issubdtype(out.dtype, jnp.integer) else out


# jax.numpy computes a negative integer power of an integer (as 0); NumPy refuses it.  Only
# integers pay for the check (it waits for the exponent).
def power(x1: Any, x2: Any, /) -> Any:
    import jax.numpy as jnp

    x1, x2 = _int8(x1), _int8(x2)
    out = jnp.power(x1, x2)
    if jnp.issubdtype(out.dtype, jnp.integer) and bool(jnp.any(jnp.asarray(x2) < 0)):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return out


def _real_only(name: str) -> Any:
    # jax.numpy computes these of complex numbers; NumPy has no complex loop for them (the
    # backend puts NumPy's TypeError in place of this one).
    def fn(x1: Any, x2: Any, /) -> Any:
        import jax.numpy as jnp

        if any(getattr(x, "dtype", None) is not None and x.dtype.kind == "c" for x in (x1, x2)):
            raise TypeError(f"{name}: NumPy has no {name} of complex numbers")
        return getattr(jnp, name)(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    return fn


# jax.numpy gives booleans their own positive; NumPy has no boolean loop for it.
def positive(x: Any, /) -> Any:
    import jax.numpy as jnp

    if x.dtype == jnp.bool_:
        raise TypeError("positive: NumPy has no positive of booleans")
    return jnp.positive(x)


def _sizes(x: Any, s: Any, axes: Any, inverse_real: bool) -> Any:
    """``s`` with NumPy's -1 (the default size of that axis: its own, or ``2 * (m - 1)`` on the
    last axis of ``irfftn``), which JAX's transforms refuse, replaced."""
    if s is None or -1 not in s:
        return s
    axes = list(range(-len(s), 0) if axes is None else axes)
    sizes = [x.shape[a] if n == -1 else n for n, a in zip(s, axes, strict=True)]
    if inverse_real and s[-1] == -1:
        sizes[-1] = 2 * (x.shape[axes[-1]] - 1)
    return tuple(sizes)


def _transform(name: str) -> Any:
    def transform(x: Any, /, *, s: Any = None, axes: Any = None, **kwargs: Any) -> Any:
        import jax.numpy as jnp

        sizes = _sizes(x, s, axes, name == "irfftn")
        return getattr(jnp.fft, name)(x, s=sizes, axes=axes, **kwargs)

    transform.__name__ = transform.__qualname__ = name
    return transform


# jax.numpy.linalg.matrix_rank takes a vector, which NumPy refuses (the reference says why).
def matrix_rank(x: Any, /, **kwargs: Any) -> Any:
    import jax.numpy as jnp

    if x.ndim < 2:
        raise ValueError("jax.numpy.linalg.matrix_rank: not a matrix")
    return jnp.linalg.matrix_rank(x, **kwargs)


# jax.numpy.cov computes in the input's precision; NumPy's in float64 (complex128), which JAX
# holds only in 64-bit mode (declines_32_bit).
def cov(m: Any, /, y: Any = None, rowvar: Any = True, bias: Any = False, ddof: Any = None) -> Any:
    import jax.numpy as jnp

    dt = jnp.result_type(*(v for v in (m, y) if v is not None), jnp.float64)
    y = None if y is None else jnp.asarray(y, dtype=dt)
    return jnp.cov(jnp.asarray(m, dtype=dt), y, rowvar=rowvar, bias=bias, ddof=ddof)


# NumPy's histogram on the host, given back as JAX arrays: jax.numpy's places its bin edges
# otherwise (its counts can differ at the edges).
def histogram(
    a: Any, /, bins: Any = 10, range: Any = None, weights: Any = None, density: Any = None
) -> Any:
    import jax.numpy as jnp
    import numpy as np

    def host(v: Any) -> Any:  # bins may be a number or NumPy's name of a rule ("auto")
        return v if v is None or isinstance(v, (int, str)) else np.asarray(v)

    counts, edges = np.histogram(host(a), host(bins), range, weights=host(weights), density=density)
    return jnp.asarray(counts), jnp.asarray(edges)


def declines_32_bit(*args: Any, **kwargs: Any) -> bool | str:
    """NumPy's result is 64-bit (float64, int64 counts), which JAX holds only in 64-bit mode."""
    return True if x64() else "NumPy's result is 64-bit, which jax holds only with x64"


def declines_rank(*args: Any, **kwargs: Any) -> bool | str:
    """jax.numpy.linalg.matrix_rank fails on an empty matrix, and applies an array ``rtol``
    to the singular values rather than to each matrix of a stack."""
    if args and getattr(args[0], "size", 1) == 0:
        return "jax.numpy.linalg.matrix_rank takes no empty matrix"
    if getattr(kwargs.get("rtol"), "ndim", 0):
        return "jax.numpy.linalg.matrix_rank reads an array rtol otherwise than NumPy"
    return True


#: The ops NumPy computes of booleans in int8.
_IN_INT8 = ("remainder", "bitwise_left_shift", "bitwise_right_shift", "square", "conj")


class JaxBackend(NamespaceBackend):
    """JAX on the host CPU, and on a GPU where JAX has one."""

    name = "jax"
    description = "JAX (jax.numpy) on the host CPU and on GPUs"
    drives = MappingProxyType({"kind": ("cpu", "gpu")})
    namespace = "jax.numpy"
    library = "jax"
    minimum = "0.4.32"
    distribution = "prism-plugin-jax"
    installed_as = ("jax",)  # availability from its metadata: prism doctor imports no JAX
    array_types = ("jax:Array",)
    # JAX imports NumPy's arrays by copy: a DLPack import of one made JAX abort at exit.
    transfer = "copy"
    compiles = True
    thread_modules = ("jax",)
    # Some index results are int32 always (searchsorted's); NumPy's are int64, where x64 holds it.
    default_dtypes = MappingProxyType({"index": "int32"})
    overrides = MappingProxyType(
        {
            "std": std,
            "var": var,
            "linalg.vector_norm": vector_norm,
            "linalg.inv": inv,
            "linalg.solve": solve,
            "linalg.cholesky": cholesky,
            "linalg.eig": eig,
            "take": take,
            "linalg.matrix_power": matrix_power,
            "linalg.matrix_rank": matrix_rank,
            "permute_dims": permute_dims,
            "arange": arange,
            "einsum": einsum,
            "floor_divide": floor_divide,
            "power": power,
            **{op: _in_int8(op) for op in _IN_INT8},
            **{op: _real_only(op) for op in ("atan2", "logaddexp")},
            "positive": positive,
            **{f"fft.{name}": _transform(name) for name in ("fftn", "ifftn", "rfftn", "irfftn")},
            # Beyond the standard: jax.numpy has NumPy's functions, with NumPy's signatures.
            "dot": "jax.numpy:dot",
            "convolve": "jax.numpy:convolve",
            "transpose": "jax.numpy:transpose",
            "triu_indices": "jax.numpy:triu_indices",
            "linalg.norm": "jax.numpy:linalg.norm",
            "cov": cov,
            "histogram": histogram,
        }
    )

    declines = MappingProxyType(
        {
            "convolve": Decline("jax.numpy.convolve computes integers as floats", kinds="biu"),
            "linalg.matrix_rank": declines_rank,
            **dict.fromkeys(("cov", "histogram"), declines_32_bit),
        }
    )

    def __init__(self) -> None:
        super().__init__()
        self._build: JaxBuild | None = None
        self._targets: tuple[Target, ...] | None = None

    @property
    def build(self) -> JaxBuild:
        """JAX's GPU plugins installed here, from the distributions' names: read once (about
        25 ms), never importing JAX."""
        if self._build is None:
            self._build = jax_build()
        return self._build

    @property
    def targets(self) -> tuple[Target, ...]:  # type: ignore[override]  # read-only: the build's
        """The CPU, and the GPUs of the installed plugins' vendors (``{"kind": "gpu", "vendor":
        "nvidia"}`` with ``jax-cuda12-plugin``, ``"amd"`` with ``jax-rocm7-plugin``)."""
        # One tuple, kept: the kit names a variant by its first target's identity.
        if self._targets is None:
            gpu = Target("gpu", self.build.gpu_requires, 10)
            self._targets = (Target("cpu", MappingProxyType({"kind": "cpu"})), gpu)
        return self._targets

    def dtypes(self, device: Any = None) -> frozenset[str]:
        return ALL_DTYPES if x64() else ALL_DTYPES - X64_ONLY

    def settings(self) -> dict[str, str]:
        return {"x64": str(x64())}

    def capabilities(self) -> dict[str, Any]:
        """The kit's, and the GPU plugins installed."""
        return super().capabilities() | {"gpu plugins": self.build.describe()}

    def can_drive(self, device: Any) -> RequirementMatch:
        """CPUs, and the GPUs of the installed GPU plugins' vendors where JAX has a GPU backend
        (on a simulated device, the description and the installed plugins decide)."""
        match = super().can_drive(device)
        if not match or device.kind == "cpu":
            return match
        why = self.build.why_not(device)
        if why is None and not prism_core.current_scope().simulated:
            why = gpu_unavailable()
        return match if why is None else RequirementMatch(False, (why,))

    def device_for(self, target: Target) -> Any:
        import jax

        return None if jax.default_backend() == target.name else jax.devices(target.name)[0]

    def where(self, array: Any) -> str | None:
        if gpu_unavailable() is not None:
            return None  # without a GPU, arrays live in one place: plans need no routing
        return "cpu" if next(iter(array.devices())).platform == "cpu" else "gpu"

    def jit(self, fn: Any, static_argnums: Any, static_argnames: Any) -> Any:
        """A placed function's body compiled whole with ``jax.jit``: its operators, indexing
        and Prism calls traced once per shape and fused by XLA."""
        import jax

        return jax.jit(fn, static_argnums=static_argnums, static_argnames=static_argnames)

    def synchronize(self, *arrays: Any) -> None:
        """JAX has no device-wide wait: it waits for the arrays given."""
        for array in arrays:
            if self.owns(array):
                array.block_until_ready()


@functools.cache
def gpu_unavailable() -> str | None:
    """Why JAX has no GPU here (``None`` when it has one); JAX is imported only where the
    driver of a vendor whose plugin is installed is seen (NVIDIA's where none is)."""
    from prism_core import amd_smi, nvidia_smi

    absent = {"nvidia": nvidia_smi.driver_absent, "amd": amd_smi.driver_absent}
    reasons = [why for v in BACKEND.build.vendors if (why := absent[v]()) is not None]
    if len(reasons) == len(BACKEND.build.vendors):
        return "; ".join(reasons)
    import jax

    try:
        jax.devices("gpu")
    except RuntimeError as exc:
        return f"JAX has no GPU backend: {exc}"
    return None


BACKEND = JaxBackend()


@prism_core.extending.hookimpl
def prism_plugin_info() -> dict[str, Any]:
    return {"description": "JAX (jax.numpy) as a Prism backend", "requires": ["jax>=0.4.32"]}


@prism_core.extending.hookimpl
def prism_backends() -> list[JaxBackend]:
    return [BACKEND]


@prism_core.extending.hookimpl
def prism_variants() -> list[prism_core.extending.Variant]:
    return BACKEND.variants(set(prism_core.all_ops()))
