"""Prism: scientific code that runs well on whatever hardware it finds.

Device descriptions are data (YAML files validated by a JSON Schema); this package loads them,
resolves their inheritance, and answers what a device has and can do.

Public names are loaded on first access (PEP 562, as SciPy's SPEC 1 recommends), so that
``import prism_core`` costs about a millisecond and imports neither YAML nor JSON Schema.
"""

from __future__ import annotations

import importlib

from prism_core._version import __version__

# Not `from typing import TYPE_CHECKING`: importing typing alone costs more than the rest of
# `import prism_core`.  Type checkers treat this name specially all the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from prism_core._config import PluginSettings
    from prism_core._contract.backend import Availability, Backend, DetectedDevice, Detection
    from prism_core._contract.variant import Variant, VariantImportError
    from prism_core._description.broadcasting import broadcast_shapes
    from prism_core._description.device import DeviceDescription, Feature, MemoryLevel, Partition
    from prism_core._description.dtype_info import finfo, iinfo
    from prism_core._description.dtypes import (
        DType,
        bfloat16,
        bool_,
        complex64,
        complex128,
        dtype,
        float8_e4m3fn,
        float8_e4m3fnuz,
        float8_e5m2,
        float8_e5m2fnuz,
        float16,
        float32,
        float64,
        int8,
        int16,
        int32,
        int64,
        uint8,
        uint16,
        uint32,
        uint64,
    )
    from prism_core._description.promotion import can_cast, isdtype, result_type
    from prism_core._description.requirements import Requirement, RequirementMatch
    from prism_core._description.schema import device_schema
    from prism_core._dispatch.arguments import ArraySpec
    from prism_core._dispatch.decision import Basis, Candidate, Decision
    from prism_core._dispatch.fallback import (
        BackendError,
        DispatchError,
        FallbackRecord,
        FallbackWarning,
        fallbacks,
        reset_fallbacks,
    )
    from prism_core._dispatch.generators import scoped
    from prism_core._dispatch.movement import MoveRecord
    from prism_core._dispatch.ops import (
        Op,
        OperationError,
        all_ops,
        explain,
        get_op,
        kernel,
        operation,
    )
    from prism_core._dispatch.scope import (
        DeviceNotPresentError,
        Scope,
        current_scope,
        device,
        policy,
        set_backend,
        use_backend,
        use_numpy_backend,
    )
    from prism_core._dispatch.transforms import (
        ValueAndGrad,
        to_device,
        to_dlpack,
        value_and_grad,
        vmap,
    )
    from prism_core._errors import (
        DeviceFileError,
        PrismError,
        PrismWarning,
        Problem,
        RequirementError,
        UnknownDeviceError,
    )
    from prism_core._knowledge.backend_registry import BackendInfo, backends, get_backend
    from prism_core._knowledge.devices import (
        DeviceLibrary,
        FileReport,
        SearchEntry,
        default_search_path,
        devices,
        get_device,
        load_device_file,
        reload_devices,
        validate_paths,
    )
    from prism_core._knowledge.execution_policy import (
        ExecutionPolicy,
        PolicyError,
    )
    from prism_core._knowledge.host import (
        CpuInfo,
        DeviceInstance,
        PresentDevices,
        detect_cpu,
        match_detected_device,
        present_devices,
        software_devices,
    )
    from prism_core._knowledge.model import (
        Figures,
        ModelError,
        PerformanceModel,
        PerformanceRow,
        PerformanceTable,
        Prediction,
        WorkloadPattern,
    )
    from prism_core._knowledge.plugins import (
        PluginError,
        PluginRecord,
        PluginSet,
        plugins,
        reload_plugins,
    )
    from prism_core._knowledge.tuning import (
        TuningCacheWarning,
        TuningEntry,
        TuningRecords,
        TuningStore,
    )
    from prism_core._knowledge.work import (
        Work,
        declare_work,
    )
    from prism_core._pipeline.pipeline import Pipeline, pipeline
    from prism_core._pipeline.report import (
        PipelineError,
        PipelinePlan,
        PipelineReport,
        PipelineRun,
        PlannedCall,
        PlannedStage,
        StageFallback,
        StageReport,
    )
    from prism_core._pipeline.split import (
        PartRecord,
        SplitError,
        SplitRecord,
        SplitRule,
        SplitSpec,
        SplitTarget,
        declare_split_rule,
        split,
        split_recording,
        split_rules,
        splitting,
    )
    from prism_core._pipeline.stage import Stage, StageRun, stage
    from prism_core._pipeline.strategy import Assignment, ExecutionStrategy, Executor
    from prism_core._tuning.planner import (
        PlanResult,
        plan,
    )
    from prism_core._tuning.ranking import execution_policy
    from prism_core._tuning.tuner import (
        Measurement,
        TuneCase,
        TuneReport,
        TuningError,
        autotune_settings,
        set_autotune,
        tune,
    )
    from prism_core.hookspecs import hookimpl

#: Public name -> the private module that defines it.
_LAZY = {
    "ArraySpec": "_dispatch.arguments",
    "BackendError": "_dispatch.fallback",
    "Candidate": "_dispatch.decision",
    "Decision": "_dispatch.decision",
    "DispatchError": "_dispatch.fallback",
    "FallbackRecord": "_dispatch.fallback",
    "FallbackWarning": "_dispatch.fallback",
    "explain": "_dispatch.ops",
    "fallbacks": "_dispatch.fallback",
    "reset_fallbacks": "_dispatch.fallback",
    "DType": "_description.dtypes",
    # The Array API's data-type and shape functions (not ops: they take dtypes and shapes).
    "broadcast_shapes": "_description.broadcasting",
    "can_cast": "_description.promotion",
    "finfo": "_description.dtype_info",
    "iinfo": "_description.dtype_info",
    "isdtype": "_description.promotion",
    "result_type": "_description.promotion",
    "bfloat16": "_description.dtypes",
    "bool_": "_description.dtypes",
    "complex64": "_description.dtypes",
    "complex128": "_description.dtypes",
    "dtype": "_description.dtypes",
    "float16": "_description.dtypes",
    "float32": "_description.dtypes",
    "float64": "_description.dtypes",
    "float8_e4m3fn": "_description.dtypes",
    "float8_e4m3fnuz": "_description.dtypes",
    "float8_e5m2": "_description.dtypes",
    "float8_e5m2fnuz": "_description.dtypes",
    "int8": "_description.dtypes",
    "int16": "_description.dtypes",
    "int32": "_description.dtypes",
    "int64": "_description.dtypes",
    "uint8": "_description.dtypes",
    "uint16": "_description.dtypes",
    "uint32": "_description.dtypes",
    "uint64": "_description.dtypes",
    "Op": "_dispatch.ops",
    "OperationError": "_dispatch.ops",
    "Variant": "_contract.variant",
    "VariantImportError": "_contract.variant",
    "all_ops": "_dispatch.ops",
    "get_op": "_dispatch.ops",
    "kernel": "_dispatch.ops",
    "operation": "_dispatch.ops",
    "DeviceNotPresentError": "_dispatch.scope",
    "Scope": "_dispatch.scope",
    "current_scope": "_dispatch.scope",
    "device": "_dispatch.scope",
    "policy": "_dispatch.scope",
    "scoped": "_dispatch.generators",
    "set_backend": "_dispatch.scope",
    "use_backend": "_dispatch.scope",
    "use_numpy_backend": "_dispatch.scope",
    "ValueAndGrad": "_dispatch.transforms",
    "to_device": "_dispatch.transforms",
    "to_dlpack": "_dispatch.transforms",
    "value_and_grad": "_dispatch.transforms",
    "vmap": "_dispatch.transforms",
    "BackendInfo": "_knowledge.backend_registry",
    "backends": "_knowledge.backend_registry",
    "get_backend": "_knowledge.backend_registry",
    "Availability": "_contract.backend",
    "Backend": "_contract.backend",
    "DetectedDevice": "_contract.backend",
    "Detection": "_contract.backend",
    "PluginError": "_knowledge.plugins",
    "PluginRecord": "_knowledge.plugins",
    "PluginSet": "_knowledge.plugins",
    "PluginWarning": "_knowledge.plugins",
    "PluginSettings": "_config",
    "CpuInfo": "_knowledge.host",
    "DeviceInstance": "_knowledge.host",
    "PresentDevices": "_knowledge.host",
    "detect_cpu": "_knowledge.host",
    "match_detected_device": "_knowledge.host",
    "present_devices": "_knowledge.host",
    "software_devices": "_knowledge.host",
    "plugins": "_knowledge.plugins",
    "reload_plugins": "_knowledge.plugins",
    "hookimpl": "hookspecs",
    "Figures": "_knowledge.model",
    "ModelError": "_knowledge.model",
    "PerformanceModel": "_knowledge.model",
    "PerformanceRow": "_knowledge.model",
    "PerformanceTable": "_knowledge.model",
    "Prediction": "_knowledge.model",
    "WorkloadPattern": "_knowledge.model",
    "ExecutionPolicy": "_knowledge.execution_policy",
    "PolicyError": "_knowledge.execution_policy",
    "Work": "_knowledge.work",
    "declare_work": "_knowledge.work",
    "PlanResult": "_tuning.planner",
    "plan": "_tuning.planner",
    "execution_policy": "_tuning.ranking",
    "TuningCacheWarning": "_knowledge.tuning",
    "TuningEntry": "_knowledge.tuning",
    "TuningRecords": "_knowledge.tuning",
    "TuningStore": "_knowledge.tuning",
    "Measurement": "_tuning.tuner",
    "TuneCase": "_tuning.tuner",
    "TuneReport": "_tuning.tuner",
    "TuningError": "_tuning.tuner",
    "autotune_settings": "_tuning.tuner",
    "set_autotune": "_tuning.tuner",
    "tune": "_tuning.tuner",
    "Basis": "_dispatch.decision",
    "MoveRecord": "_dispatch.movement",
    "Pipeline": "_pipeline.pipeline",
    "pipeline": "_pipeline.pipeline",
    "PipelineError": "_pipeline.report",
    "PipelinePlan": "_pipeline.report",
    "PipelineReport": "_pipeline.report",
    "PipelineRun": "_pipeline.report",
    "PlannedCall": "_pipeline.report",
    "PlannedStage": "_pipeline.report",
    "StageFallback": "_pipeline.report",
    "StageReport": "_pipeline.report",
    "Stage": "_pipeline.stage",
    "StageRun": "_pipeline.stage",
    "stage": "_pipeline.stage",
    "PartRecord": "_pipeline.split",
    "SplitError": "_pipeline.split",
    "SplitRecord": "_pipeline.split",
    "SplitRule": "_pipeline.split",
    "SplitSpec": "_pipeline.split",
    "SplitTarget": "_pipeline.split",
    "declare_split_rule": "_pipeline.split",
    "split": "_pipeline.split",
    "split_recording": "_pipeline.split",
    "split_rules": "_pipeline.split",
    "splitting": "_pipeline.split",
    "Assignment": "_pipeline.strategy",
    "ExecutionStrategy": "_pipeline.strategy",
    "Executor": "_pipeline.strategy",
    "DeviceDescription": "_description.device",
    "Feature": "_description.device",
    "MemoryLevel": "_description.device",
    "Partition": "_description.device",
    "DeviceFileError": "_errors",
    "PrismError": "_errors",
    "PrismWarning": "_errors",
    "Problem": "_errors",
    "RequirementError": "_errors",
    "UnknownDeviceError": "_errors",
    "DeviceLibrary": "_knowledge.devices",
    "FileReport": "_knowledge.devices",
    "SearchEntry": "_knowledge.devices",
    "default_search_path": "_knowledge.devices",
    "devices": "_knowledge.devices",
    "get_device": "_knowledge.devices",
    "load_device_file": "_knowledge.devices",
    "reload_devices": "_knowledge.devices",
    "validate_paths": "_knowledge.devices",
    "Requirement": "_description.requirements",
    "RequirementMatch": "_description.requirements",
    "device_schema": "_description.schema",
}

__all__ = [
    "ArraySpec",
    "Assignment",
    "Availability",
    "Backend",
    "BackendError",
    "BackendInfo",
    "Basis",
    "Candidate",
    "CpuInfo",
    "DType",
    "Decision",
    "DetectedDevice",
    "Detection",
    "DeviceDescription",
    "DeviceFileError",
    "DeviceInstance",
    "DeviceLibrary",
    "DeviceNotPresentError",
    "DispatchError",
    "ExecutionPolicy",
    "ExecutionStrategy",
    "Executor",
    "FallbackRecord",
    "FallbackWarning",
    "Feature",
    "Figures",
    "FileReport",
    "Measurement",
    "MemoryLevel",
    "ModelError",
    "MoveRecord",
    "Op",
    "OperationError",
    "PartRecord",
    "Partition",
    "PerformanceModel",
    "PerformanceRow",
    "PerformanceTable",
    "Pipeline",
    "PipelineError",
    "PipelinePlan",
    "PipelineReport",
    "PipelineRun",
    "PlanResult",
    "PlannedCall",
    "PlannedStage",
    "PluginError",
    "PluginRecord",
    "PluginSet",
    "PluginSettings",
    "PluginWarning",
    "PolicyError",
    "Prediction",
    "PresentDevices",
    "PrismError",
    "PrismWarning",
    "Problem",
    "Requirement",
    "RequirementError",
    "RequirementMatch",
    "Scope",
    "SearchEntry",
    "SplitError",
    "SplitRecord",
    "SplitRule",
    "SplitSpec",
    "SplitTarget",
    "Stage",
    "StageFallback",
    "StageReport",
    "StageRun",
    "TuneCase",
    "TuneReport",
    "TuningCacheWarning",
    "TuningEntry",
    "TuningError",
    "TuningRecords",
    "TuningStore",
    "UnknownDeviceError",
    "ValueAndGrad",
    "Variant",
    "VariantImportError",
    "Work",
    "WorkloadPattern",
    "__version__",
    "all_ops",
    "array_api",
    "autotune_settings",
    "backends",
    "bfloat16",
    "bool_",
    "broadcast_shapes",
    "can_cast",
    "complex64",
    "complex128",
    "current_scope",
    "declare_split_rule",
    "declare_work",
    "default_search_path",
    "detect_cpu",
    "device",
    "device_schema",
    "devices",
    "dtype",
    "execution_policy",
    "explain",
    "fallbacks",
    "fft",
    "finfo",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float16",
    "float32",
    "float64",
    "get_backend",
    "get_device",
    "get_op",
    "hookimpl",
    "iinfo",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "kernel",
    "linalg",
    "load_device_file",
    "match_detected_device",
    "operation",
    "pipeline",
    "plan",
    "plugins",
    "policy",
    "present_devices",
    "random",
    "reload_devices",
    "reload_plugins",
    "reset_fallbacks",
    "result_type",
    "scoped",
    "set_autotune",
    "set_backend",
    "software_devices",
    "split",
    "split_recording",
    "split_rules",
    "splitting",
    "stage",
    "to_device",
    "to_dlpack",
    "tune",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "use_backend",
    "use_numpy_backend",
    "validate_paths",
    "value_and_grad",
    "vmap",
]


_NAMESPACES = ("linalg", "fft", "random", "array_api")
#: Subpackages of optional extras (`prism.distributed`: pip install prism-core[distributed]),
#: imported on first access like the namespaces, but kept out of __all__ so that
#: `from prism_core import *` never imports Dask.
_EXTRAS = ("distributed",)
#: Public submodules: `from . import hookspecs` asks this module for the name first, and must
#: get an AttributeError (then the import system loads the submodule), never an op lookup.
_SUBMODULES = frozenset({"hookspecs", "backend_kit", "nvidia_smi", "testing", "_builtin", "lint"})
#: Namespaces that moved to plugins: what the AttributeError says (read only on that error).
_MOVED = {
    "genomics": "; sequence alignment is the prism-plugin-genomics package now: "
    "`pip install prism-plugin-genomics`, then `import prism_genomics`",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    elif name in _NAMESPACES or name in _EXTRAS:
        value = importlib.import_module(f"{__name__}.{name}")
    elif not name.startswith("_") and name not in _SUBMODULES:
        # The operations: prism_core.matmul, prism_core.vector_add, ...
        from prism_core._dispatch.ops import OperationError, get_op

        try:
            value = get_op(name).function
        except OperationError:
            moved = _MOVED.get(name, "")
            raise AttributeError(f"module 'prism_core' has no attribute {name!r}{moved}") from None
    else:
        raise AttributeError(f"module 'prism_core' has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    from prism_core._dispatch.ops import all_ops

    ops = [n for n in all_ops() if "." not in n]
    return sorted(set(globals()) | set(__all__) | set(ops))
