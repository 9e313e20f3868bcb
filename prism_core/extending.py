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
    "Availability": "_contract.backend",
    "Backend": "_contract.backend",
    "BackendInfo": "_knowledge.backend_registry",
    "DetectedDevice": "_contract.backend",
    "Detection": "_contract.backend",
    "PluginError": "_knowledge.plugins",
    "PluginRecord": "_knowledge.plugins",
    "PluginSet": "_knowledge.plugins",
    "PluginSettings": "_config",
    "PluginWarning": "_knowledge.plugins",
    "Variant": "_contract.variant",
    "VariantImportError": "_contract.variant",
    "Work": "_knowledge.work",
    "backends": "_knowledge.backend_registry",
    "declare_work": "_knowledge.work",
    "get_backend": "_knowledge.backend_registry",
    "hookimpl": "hookspecs",
    "kernel": "_dispatch.ops",
    "operation": "_dispatch.ops",
    "plugins": "_knowledge.plugins",
    "reload_plugins": "_knowledge.plugins",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
