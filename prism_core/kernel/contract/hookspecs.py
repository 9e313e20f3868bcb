"""The plugin contract: the hooks a Prism plugin may implement.

A plugin is a module (or any object), found through the entry-point group ``prism.plugins``,
with functions marked ``@prism_core.extending.hookimpl`` named as the hooks below.  They are
called once per process, when Prism first needs its plugins (``prism_detect_devices`` when the
host is inspected), each plugin's on its own: one that raises or returns the wrong type fails
alone (an error in strict mode, ``PRISM_STRICT_PLUGINS=1``).  An implementation may take fewer
arguments than its specification, never others.  Hooks must be cheap and import no heavy
framework (``prism plugins`` calls them).  docs/writing-a-plugin.md ("From an empty folder",
"Rules of the contract") has the rest; its hook reference is generated from this module
(``python docs/gen_hook_reference.py``), and a test keeps the two in sync.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from os import PathLike

    from prism_core.kernel.contract.backend import Backend, Detection
    from prism_core.kernel.contract.extension_points import Ranker
    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = ["PROJECT", "hookimpl", "hookspec"]

#: The pluggy project name of Prism's hooks.
PROJECT = "prism"
hookspec = pluggy.HookspecMarker(PROJECT)
#: The marker plugins put on their hook implementations (``@prism_core.extending.hookimpl``).
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def prism_plugin_info() -> Mapping[str, object]:  # type: ignore[empty-body]
    """Describe the plugin, cheaply: called when plugins are listed (``prism plugins``,
    ``prism doctor``), it must not import any heavy framework.

    :returns: a mapping with any of the keys ``description`` (one line), ``url`` and
        ``requires`` (a list of the optional runtime packages the plugin's backends need, as
        requirement strings such as ``"torch>=2.1"``).  Unknown keys are kept and shown.
    """


@hookspec
def prism_hardware_dirs() -> Sequence[str | PathLike[str]]:  # type: ignore[empty-body]
    """Contribute directories (or files) of device descriptions, searched after the shipped
    library and before ``PRISM_HARDWARE_PATH``, in plugin order, and validated as any other: a
    device type defined in a plugin directory replaces a shipped one of the same name.

    :returns: a sequence of paths; each must exist.
    """


@hookspec
def prism_backends() -> Sequence[Backend]:  # type: ignore[empty-body]
    """Contribute backends: the runtimes that execute operations on devices.

    Creating one must be cheap: import the framework in
    :meth:`~prism_core.extending.Backend.availability` and the array methods, not in
    ``__init__``.  A backend whose name another plugin's backend has fails its plugin.

    :returns: a sequence of :class:`prism_core.extending.Backend`.
    """


@hookspec
def prism_variants() -> Sequence[Variant]:  # type: ignore[empty-body]
    """Contribute variants of operations: implementations with requirements on the device.

    Return :class:`prism_core.extending.Variant` instances.  Each names the operation it
    implements (``"matmul"``), the backend it runs on, a requirement mapping on the device
    (docs/device-files.md, "Requirements") and a priority, and optionally a per-call check of
    the arguments (``can_run``) and ``dtype_support`` (the device must accelerate the op in the
    arguments' data type).  For every call, dispatch ranks them with the op's other variants and
    runs the best one eligible for the devices in scope; ``prism explain`` says why
    (docs/dispatch.md).  Name implementations as ``"module:attribute"`` strings, so that
    discovery imports no framework.

    :returns: a sequence of :class:`prism_core.extending.Variant`.
    """


@hookspec(firstresult=True)
def prism_ranker() -> Ranker | None:
    """Order the eligible candidates of a call beyond their declared priority.

    Called once per plugin set, when a call first has candidates to order; the first plugin
    that answers ranks every call.  Where none answers, Prism ranks by tuned times, the
    performance model and execution policies (docs/performance.md).  The ranker's
    ``rank(request)`` answers a :class:`~prism_core.extending.Ranked` for a
    :class:`~prism_core.extending.RankRequest` (docs/architecture.md, "Extension points").

    :returns: a :class:`prism_core.extending.Ranker`, or ``None`` to leave ranking to
        another plugin.
    """


@hookspec
def prism_detect_devices(library: DeviceLibrary) -> Detection:  # type: ignore[empty-body]
    """Detect the devices of this plugin's kind that are present on this host.

    Called when the host is inspected, never at import.  Use cheap checks first (is the driver
    library there?) and never raise for "no device": return an empty detection with a reason.
    A backend on NVIDIA GPUs can return ``prism_core.nvidia_smi.detect(library)`` (asks the
    driver's ``nvidia-smi``; imports no framework).  Give each device its ``uuid`` where known:
    a device two plugins report with one UUID is present once, as the first plugin's.

    :param library: the device library, to check that the device types you report exist.
    :returns: a :class:`prism_core.extending.Detection` listing
        :class:`prism_core.extending.DetectedDevice` (each names the ``device_type`` of its
        description) and, when the list is empty, a ``reason``.
    """
