"""``prism_core.tuning``: choosing by measurement and by prediction.

The tuner (``tune``, tuning on first use) and its records, the performance model, and
choosing a device that is not here (``choose_device``; docs/performance.md).
"""

from __future__ import annotations

from prism_core._lazy import attach

#: Public name -> the private module that defines it.
_LAZY = {
    "Basis": "kernel.dispatch.decision",
    "DeviceChoice": "_tuning.planner",
    "Figures": "_tuning.figures",
    "Measurement": "_tuning.measurements",
    "ModelError": "_tuning.model",
    "PerformanceModel": "_tuning.model",
    "PerformanceRow": "_tuning.predictions",
    "PerformanceTable": "_tuning.predictions",
    "Prediction": "_tuning.predictions",
    "TuneCase": "_tuning.tune_report",
    "TuneReport": "_tuning.tune_report",
    "TuningCacheWarning": "_tuning.tuning_records",
    "TuningEntry": "_tuning.tuning_entries",
    "TuningError": "_tuning.tuner",
    "TuningRecords": "_tuning.tuning_entries",
    "TuningStore": "_tuning.tuning_records",
    "WorkloadPattern": "_tuning.workload_patterns",
    "autotune_settings": "_tuning.tuner",
    "choose_device": "_tuning.planner",
    "set_autotune": "_tuning.tuner",
    "tune": "_tuning.tuner",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
