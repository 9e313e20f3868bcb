"""``prism_core.extending``: what extends Prism, and what is installed.

Ops and variants of one's own (``operation``, ``kernel``) and the work the performance model
predicts them from (``declare_work``), the contract a backend implements
(``Backend``, ``Availability``, ``Detection``) and the arrays it is given (``Array``), the plugin
hooks (``hookimpl``; the specs are ``prism_core.hookspecs``), the kernel's extension points
(``Ranker``, ``FirstUse``, ``Planner``, ``Rescuer``) and the installed plugins and backends.
Helpers for backend authors are ``prism_core.backend_kit`` (docs/writing-a-plugin.md).
"""

from __future__ import annotations

from prism_core._lazy import attach

#: Public name -> the private module that defines it.
_LAZY = {
    "Array": "kernel.contract.array",
    "Availability": "kernel.contract.backend",
    "Backend": "kernel.contract.backend",
    "BackendInfo": "_backend_registry",
    "DetectedDevice": "kernel.contract.backend",
    "Detection": "kernel.contract.backend",
    "FirstUse": "kernel.contract.extension_points",
    "Planner": "kernel.contract.extension_points",
    "PluginError": "kernel.plugins",
    "PluginRecord": "kernel.plugins",
    "PluginSet": "kernel.plugins",
    "PluginSettings": "kernel.config",
    "PluginWarning": "kernel.plugins",
    "RankRequest": "kernel.contract.extension_points",
    "Ranked": "kernel.contract.extension_points",
    "Ranker": "kernel.contract.extension_points",
    "Rescuer": "kernel.contract.extension_points",
    "Variant": "kernel.contract.variant",
    "VariantImportError": "kernel.contract.variant",
    "Work": "_tuning.op_work",
    "backends": "_backend_registry",
    "declare_work": "_tuning.work",
    "get_backend": "_backend_registry",
    "hookimpl": "kernel.contract.hookspecs",
    "kernel": "kernel.dispatch.ops",
    "operation": "kernel.dispatch.ops",
    "plugins": "kernel.plugins",
    "reload_plugins": "kernel.plugins",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
