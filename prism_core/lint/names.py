"""What dotted names mean to the lint: Prism's ops, and the frameworks' functions, data types,
random generators, device APIs and array types, each with what Prism has in its place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prism_core.kernel.dispatch.catalogue import ALIASES, CATALOGUE, SPECS
from prism_core.lint.codes import FRAMEWORKS

__all__ = [
    "ARRAY_TYPES",
    "BUILTIN_CONVERSIONS",
    "CONVERSION_METHODS",
    "DEVICE_CALLS",
    "DEVICE_STRINGS",
    "DISPLAY",
    "DTYPE_NAMES",
    "NORMAL_SAMPLERS",
    "OP_NOTES",
    "PROBES",
    "RANDOM_MODULES",
    "TORCH_RANDOM",
    "TYPING_MODULES",
    "framework_dtype",
    "framework_of",
    "framework_op",
    "prism_op",
    "under",
]

_OPS = frozenset(CATALOGUE)

DISPLAY = {
    "numpy": "NumPy",
    "torch": "torch",
    "cupy": "CuPy",
    "cupyx": "CuPy",
    "jax": "JAX",
    "mlx": "MLX",
}
#: Framework namespaces that follow NumPy's names (the op is found by its NumPy name).
_NUMPY_LIKE = ("numpy", "cupy", "jax.numpy", "mlx.core")
#: NumPy-style names that are not Prism's -> Prism's op.
_NUMPY_RENAMES = {
    "array": "asarray",
    "absolute": "abs",
    "amax": "max",
    "amin": "min",
    "conjugate": "conj",
    "true_divide": "divide",
    "pow": "power",
    "permute_dims": "transpose",
}
#: torch names that are not Prism's -> Prism's op.
_TORCH_RENAMES = {
    "tensor": "asarray",
    "as_tensor": "asarray",
    "from_numpy": "asarray",
    "cat": "concat",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "true_divide": "divide",
    "pow": "power",
    "clamp": "clip",
    "mm": "matmul",
    "bmm": "matmul",
    "unsqueeze": "expand_dims",
    "permute": "transpose",
    "movedim": "moveaxis",
    "absolute": "abs",
    "amax": "max",
    "amin": "min",
}
#: What to check when moving to the Prism op (Prism follows the Array API): the op's record's
#: ``numpy_note``, as the message puts it.
OP_NOTES = {s.name: f" ({s.numpy_note})" for s in SPECS if s.numpy_note}
#: Random number modules of the frameworks (every call under them is PRISM007).
RANDOM_MODULES = ("numpy.random", "cupy.random", "jax.random", "mlx.core.random", "torch.random")
TORCH_RANDOM = frozenset(
    {
        "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
        "rand_like", "randn_like", "randint_like", "manual_seed", "seed", "initial_seed",
        "get_rng_state", "set_rng_state", "Generator",
    }
)  # fmt: skip
NORMAL_SAMPLERS = frozenset({"normal", "standard_normal", "randn", "randn_like"})
#: Device APIs: calls under these (or equal to them) are PRISM006.
DEVICE_CALLS = (
    "torch.device",
    "torch.cuda",
    "torch.mps",
    "torch.set_default_device",
    "cupy.cuda",
    "jax.device_put",
    "jax.devices",
    "jax.local_devices",
    "mlx.core.set_default_device",
    "mlx.core.default_device",
)
DEVICE_STRINGS = frozenset({"cuda", "cpu", "mps", "xpu", "hip", "gpu", "tpu", "meta", "npu"})

_COMMON_DTYPES = {
    n: n
    for n in (
        "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3",
        "float8_e3m4",
    )
}  # fmt: skip
_NO_PRISM_DTYPE = ("intp", "uintp", "longdouble", "float128",
                   "clongdouble", "complex256", "complex32", "int_", "uint")  # fmt: skip
#: Framework dtype names -> Prism's (None: Prism has none).
_NUMPY_DTYPES: Mapping[str, str | None] = {
    **_COMMON_DTYPES,
    **dict.fromkeys(_NO_PRISM_DTYPE),
    "bool": "bool_",
    "half": "float16",
    "single": "float32",
    "double": "float64",
    "float_": "float64",
    "csingle": "complex64",
    "cdouble": "complex128",
    "complex_": "complex128",
    "byte": "int8",
    "ubyte": "uint8",
    "short": "int16",
    "intc": "int32",
    "longlong": "int64",
}
_TORCH_DTYPES: Mapping[str, str | None] = {
    **_COMMON_DTYPES,
    **dict.fromkeys(_NO_PRISM_DTYPE),
    "bool": "bool_",
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "short": "int16",
    "int": "int32",
    "long": "int64",
}
DTYPE_NAMES = frozenset(_NUMPY_DTYPES) | frozenset(_TORCH_DTYPES) | {"dtype"}
#: Annotations that make a parameter an array.
ARRAY_TYPES = frozenset(
    {
        "numpy.ndarray",
        "numpy.typing.NDArray",
        "torch.Tensor",
        "cupy.ndarray",
        "jax.Array",
        "jax.numpy.ndarray",
        "mlx.core.array",
    }
)
CONVERSION_METHODS = {
    "numpy": "converts it to a NumPy array",
    "cpu": "copies it to the host",
    "item": "makes a Python scalar of it",
}
BUILTIN_CONVERSIONS = frozenset({"float", "int", "complex", "bool"})
PROBES = frozenset({"numpy", "cpu", "cuda", "__cuda_array_interface__"})
#: The frameworks' typing helpers: aliases of Python types, not the frameworks' own types.
TYPING_MODULES = ("numpy.typing", "torch.types", "jax.typing")


def framework_of(dotted: str) -> str | None:
    """The framework a dotted name belongs to (``numpy`` for ``numpy.linalg.svd``), or None."""
    root = dotted.split(".", 1)[0]
    return root if root in FRAMEWORKS else None


def under(dotted: str, prefixes: Sequence[str]) -> bool:
    """Whether ``dotted`` is one of ``prefixes`` or a name inside one."""
    return any(dotted == p or dotted.startswith(p + ".") for p in prefixes)


def prism_op(dotted: str | None) -> str | None:
    """The Prism op ``dotted`` names (``prism_core.linalg.inverse`` -> ``linalg.inv``), or None."""
    if dotted is None or not dotted.startswith("prism_core."):
        return None
    rest = dotted[len("prism_core.") :]
    name = ALIASES.get(rest, rest)
    return name if name in _OPS else None


def framework_op(dotted: str) -> str | None:
    """The Prism op standing for the framework function ``dotted`` (``numpy.concatenate`` ->
    ``concat``, ``torch.cat`` -> ``concat``), or None where Prism has none."""
    for prefix in _NUMPY_LIKE:
        if dotted.startswith(prefix + "."):
            rest = dotted[len(prefix) + 1 :]
            rest = _NUMPY_RENAMES.get(rest, rest)
            break
    else:
        if not dotted.startswith("torch."):
            return None
        rest = dotted[len("torch.") :]
        rest = _TORCH_RENAMES.get(rest, rest)
    name = ALIASES.get(rest, rest)
    return name if name in _OPS and not name.startswith("random.") else None


def framework_dtype(dotted: str) -> tuple[bool, str | None]:
    """Whether ``dotted`` is a framework's data type, and Prism's name for it (None: none)."""
    if dotted.startswith("torch."):
        table, rest = _TORCH_DTYPES, dotted[len("torch.") :]
    else:
        for prefix in _NUMPY_LIKE:
            if dotted.startswith(prefix + "."):
                table, rest = _NUMPY_DTYPES, dotted[len(prefix) + 1 :]
                break
        else:
            return False, None
    if rest == "dtype":
        return True, "dtype"
    if rest in table:
        return True, table[rest]
    return False, None
