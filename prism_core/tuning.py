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
    "Figures": "_tuning.model",
    "Measurement": "_tuning.tuner",
    "ModelError": "_tuning.model",
    "PerformanceModel": "_tuning.model",
    "PerformanceRow": "_tuning.model",
    "PerformanceTable": "_tuning.model",
    "Prediction": "_tuning.model",
    "TuneCase": "_tuning.tuner",
    "TuneReport": "_tuning.tuner",
    "TuningCacheWarning": "_tuning.tuning_records",
    "TuningEntry": "_tuning.tuning_records",
    "TuningError": "_tuning.tuner",
    "TuningRecords": "_tuning.tuning_records",
    "TuningStore": "_tuning.tuning_records",
    "WorkloadPattern": "_tuning.model",
    "autotune_settings": "_tuning.tuner",
    "choose_device": "_tuning.planner",
    "set_autotune": "_tuning.tuner",
    "tune": "_tuning.tuner",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
