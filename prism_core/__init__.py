"""Prism: scientific code that runs well on whatever hardware it finds.

The top level holds the ops (``prism_core.matmul``, the Array API's functions and the seeds'
names for them), NumPy's grids (``mgrid``, ``ogrid``), the dtypes, where calls run
(``device``, ``use_backend``, ``choosing``, ``execution_policy``), what a call did
(``explain``, ``fallbacks``) and the errors.  Everything else lives in a namespace named
after what it is for: ``hardware``, ``tuning``, ``pipelines``, ``extending`` (and
``distributed``, ``backend_kit``, ``testing``, ``lint``).  docs/api.md lists every public name.

Names are loaded on first access (PEP 562, as SciPy's SPEC 1 recommends), so that ``import
prism_core`` costs about a millisecond and imports neither YAML nor JSON Schema.  The names
are listed once, in ``_LAZY``; ``__init__.pyi`` (generated from it by
``python -m prism_core._api_reference``) tells type checkers their types.
"""

from __future__ import annotations

import importlib

from prism_core.kernel.version import __version__

#: Public name -> the private module that defines it.
_LAZY = {
    # The Array API's data types, and its functions of dtypes and shapes.
    "DType": "kernel.description.dtypes",
    "bfloat16": "kernel.description.dtypes",
    "bool_": "kernel.description.dtypes",
    "complex64": "kernel.description.dtypes",
    "complex128": "kernel.description.dtypes",
    "dtype": "kernel.description.dtypes",
    "float16": "kernel.description.dtypes",
    "float32": "kernel.description.dtypes",
    "float64": "kernel.description.dtypes",
    "float8_e4m3fn": "kernel.description.dtypes",
    "float8_e4m3fnuz": "kernel.description.dtypes",
    "float8_e5m2": "kernel.description.dtypes",
    "float8_e5m2fnuz": "kernel.description.dtypes",
    "float8_e4m3": "kernel.description.dtypes",
    "float8_e3m4": "kernel.description.dtypes",
    "int8": "kernel.description.dtypes",
    "int16": "kernel.description.dtypes",
    "int32": "kernel.description.dtypes",
    "int64": "kernel.description.dtypes",
    "uint8": "kernel.description.dtypes",
    "uint16": "kernel.description.dtypes",
    "uint32": "kernel.description.dtypes",
    "uint64": "kernel.description.dtypes",
    "broadcast_shapes": "_broadcasting",
    "can_cast": "_promotion",
    "finfo": "_dtype_info",
    "iinfo": "_dtype_info",
    "isdtype": "_promotion",
    "result_type": "_promotion",
    # The ops themselves.
    "Op": "kernel.dispatch.ops",
    "all_ops": "kernel.dispatch.ops",
    "get_op": "kernel.dispatch.ops",
    "to_device": "_transforms",
    "to_dlpack": "_transforms",
    "value_and_grad": "_transforms",
    "ValueAndGrad": "_transforms",
    "vmap": "_transforms",
    # NumPy's index tricks that make grids, on the backend in scope.
    "mgrid": "_grids",
    "ogrid": "_grids",
    # Where calls run.
    "Scope": "kernel.dispatch.scope",
    "choosing": "kernel.dispatch.scope",
    "current_scope": "kernel.dispatch.scope",
    "device": "kernel.dispatch.scope",
    "execution_policy": "_tuning.ranking",
    "ExecutionPolicy": "_tuning.execution_policy",
    "scoped": "_generators",
    "set_backend": "kernel.dispatch.scope",
    "use_backend": "kernel.dispatch.scope",
    "use_numpy_backend": "kernel.dispatch.scope",
    # The seed's names for a pipeline and its stages (``prism_core.pipelines`` has the rest).
    "pipeline": "_pipeline.pipeline",
    "stage": "_pipeline.stage",
    # A whole function placed on one backend and device (docs/functions.md).
    "function": "_function.placed",
    "PlacedFunction": "_function.placed",
    # What a call did.
    "ArraySpec": "kernel.dispatch.arguments",
    "Candidate": "kernel.dispatch.decision",
    "Decision": "kernel.dispatch.decision",
    "explain": "kernel.dispatch.ops",
    "FallbackRecord": "kernel.dispatch.fallback",
    "fallbacks": "kernel.dispatch.fallback",
    "reset_fallbacks": "kernel.dispatch.fallback",
    # Errors and warnings.
    "BackendError": "kernel.dispatch.fallback",
    "DeviceNotPresentError": "kernel.dispatch.scope",
    "DispatchError": "kernel.dispatch.fallback",
    "FallbackWarning": "kernel.dispatch.fallback",
    "OperationError": "kernel.dispatch.ops",
    "PolicyError": "_tuning.execution_policy",
    "PrismError": "kernel.errors",
    "PrismWarning": "kernel.errors",
}

#: Namespaces of ops, imported on first access.
_NAMESPACES = ("linalg", "fft", "random", "array_api")
#: Namespaces of features, imported on first access.
_FEATURES = ("hardware", "tuning", "pipelines", "extending")
#: Subpackages of optional extras (`prism.distributed`: pip install prism-core[distributed]),
#: imported on first access like the namespaces, but kept out of __all__ so that
#: `from prism_core import *` never imports Dask.
_EXTRAS = ("distributed",)
#: Public submodules: `from . import hookspecs` asks this module for the name first, and must
#: get an AttributeError (then the import system loads the submodule), never an op lookup.
_SUBMODULES = frozenset({"hookspecs", "backend_kit", "nvidia_smi", "testing", "_builtin", "lint"})
#: Names whose meaning moved, with what they are now (the others moved unchanged into a
#: feature namespace, and are found there).
_RENAMED = {
    "policy": "choosing",
    "plan": "tuning.choose_device",
    "PlanResult": "tuning.DeviceChoice",
}
#: Namespaces that moved to plugins: what the AttributeError says (read only on that error).
_GONE = {
    "genomics": "; sequence alignment is the prism-plugin-genomics package now: "
    "`pip install prism-plugin-genomics`, then `import prism_genomics`",
}

__all__ = ["__version__", *_LAZY, *_NAMESPACES, *_FEATURES]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    elif name in _NAMESPACES or name in _FEATURES or name in _EXTRAS:
        value = importlib.import_module(f"{__name__}.{name}")
    elif not name.startswith("_") and name not in _SUBMODULES:
        # The operations: prism_core.matmul, prism_core.vector_add, ...
        from prism_core.kernel.dispatch.ops import OperationError, get_op

        try:
            value = get_op(name).function
        except OperationError:
            return _moved(name)
    else:
        raise AttributeError(f"module 'prism_core' has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def _moved(name: str) -> object:
    """A name the top level held before its names were curated: found where it lives now,
    with a ``DeprecationWarning`` saying where (looked for only when nothing else matched)."""
    new = _RENAMED.get(name)
    if new is not None:
        space, _, new_name = new.rpartition(".")
        owner = importlib.import_module(f"{__name__}.{space}") if space else None
        where = f"prism_core.{new}"
        value = getattr(owner, new_name) if owner is not None else __getattr__(new_name)
    else:
        for feature in _FEATURES:
            namespace = importlib.import_module(f"{__name__}.{feature}")
            if name in namespace.__all__:
                where, value = f"prism_core.{feature}.{name}", getattr(namespace, name)
                break
        else:
            gone = _GONE.get(name, "")
            raise AttributeError(f"module 'prism_core' has no attribute {name!r}{gone}")
    import warnings

    warnings.warn(
        f"prism_core.{name} is {where}; the top-level name will be removed",
        DeprecationWarning,
        stacklevel=3,
    )
    return value


def __dir__() -> list[str]:
    from prism_core.kernel.dispatch.ops import all_ops

    ops = [n for n in all_ops() if "." not in n]
    return sorted(set(globals()) | set(__all__) | set(ops))
