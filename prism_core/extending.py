"""``prism_core.extending``: what extends Prism, and what is installed.

Ops and variants of one's own (``operation``, ``kernel``) and the work the performance model
predicts them from (``declare_work``), the contract a backend implements
(``Backend``, ``Availability``, ``Detection``), the plugin hooks (``hookimpl``; the specs are
``prism_core.hookspecs``) and the installed plugins and backends.  Helpers for backend
authors are ``prism_core.backend_kit`` (docs/writing-a-plugin.md).
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
    "PluginError": "kernel.plugins",
    "PluginRecord": "kernel.plugins",
    "PluginSet": "kernel.plugins",
    "PluginSettings": "kernel.config",
    "PluginWarning": "kernel.plugins",
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
