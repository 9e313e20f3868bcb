"""``prism_core.tuning``: choosing by measurement and by prediction.

The tuner (``tune``, tuning on first use) and its records, the performance model, and
choosing a device that is not here (``choose_device``; docs/performance.md).
"""

from __future__ import annotations

from prism_core._lazy import attach

#: Public name -> the private module that defines it.
_LAZY = {
    "Basis": "_dispatch.decision",
    "DeviceChoice": "_tuning.planner",
    "Figures": "_knowledge.model",
    "Measurement": "_tuning.tuner",
    "ModelError": "_knowledge.model",
    "PerformanceModel": "_knowledge.model",
    "PerformanceRow": "_knowledge.model",
    "PerformanceTable": "_knowledge.model",
    "Prediction": "_knowledge.model",
    "TuneCase": "_tuning.tuner",
    "TuneReport": "_tuning.tuner",
    "TuningCacheWarning": "_knowledge.tuning_records",
    "TuningEntry": "_knowledge.tuning_records",
    "TuningError": "_tuning.tuner",
    "TuningRecords": "_knowledge.tuning_records",
    "TuningStore": "_knowledge.tuning_records",
    "WorkloadPattern": "_knowledge.model",
    "autotune_settings": "_tuning.tuner",
    "choose_device": "_tuning.planner",
    "set_autotune": "_tuning.tuner",
    "tune": "_tuning.tuner",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
