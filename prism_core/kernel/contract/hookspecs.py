"""The plugin contract: the hooks a Prism plugin may implement.

A plugin is a module (or any object) with functions marked ``@prism_core.extending.hookimpl`` whose
names are the hook names below.  Third-party plugins are found through the entry-point group
``prism.plugins``::

    # pyproject.toml of prism-plugin-acme
    [project.entry-points."prism.plugins"]
    acme = "prism_plugin_acme.plugin"

and ``prism_plugin_acme/plugin.py`` implements some of these hooks::

    import prism_core

    @prism_core.extending.hookimpl
    def prism_hardware_dirs():
        return [Path(__file__).parent / "hardware"]

Rules for every hook:

* Hooks are called at **discovery time** (the first time Prism needs its plugins), once per
  process, never per operation call.  ``prism_detect_devices`` is called when the host is
  inspected (``prism doctor``, automatic device selection).
* Each plugin's implementation is called **on its own**: a plugin that raises, or returns the
  wrong type, is recorded as failed (with the error), its contributions are dropped, and every
  other plugin keeps working.  In strict mode (``PRISM_STRICT_PLUGINS=1``) it is an error.
* A hook implementation may accept fewer arguments than the specification lists, never more
  or differently named ones; a misspelled hook name makes the plugin fail ("did you mean").
* Hooks must be cheap and must not import heavy frameworks (torch, cupy, jax): import them
  inside backend methods.  ``prism plugins`` calls the hooks below except
  ``prism_detect_devices`` and must stay fast.
* Every hook collects the results of all plugins (none is "first result wins").

The reference for plugin authors is docs/writing-a-plugin.md; its hook section is generated
from this module (``python docs/gen_hook_reference.py``) and a test keeps the two in sync.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from os import PathLike

    from prism_core.kernel.contract.backend import Backend, Detection
    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = ["PROJECT", "hookimpl", "hookspec"]

#: The pluggy project name of Prism's hooks.
PROJECT = "prism"
hookspec = pluggy.HookspecMarker(PROJECT)
#: The marker plugins put on their hook implementations (``@prism_core.extending.hookimpl``).
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def prism_plugin_info() -> Mapping[str, Any]:  # type: ignore[empty-body]
    """Describe the plugin, cheaply.

    Called when plugins are listed (``prism plugins``, ``prism doctor``).  Must not import any
    heavy framework.

    :returns: a mapping with any of the keys ``description`` (one line), ``url`` and
        ``requires`` (a list of the optional runtime packages the plugin's backends need, as
        requirement strings such as ``"torch>=2.1"``).  Unknown keys are kept and shown.
    """


@hookspec
def prism_hardware_dirs() -> Sequence[str | PathLike[str]]:  # type: ignore[empty-body]
    """Contribute directories (or files) of device descriptions.

    They are searched after the shipped library and before ``PRISM_HARDWARE_PATH``, in plugin
    order; a device type defined in a plugin directory replaces a shipped one of the same name.
    Every file is validated like any other device file.

    :returns: a sequence of paths; each must exist.
    """


@hookspec
def prism_backends() -> Sequence[Backend]:  # type: ignore[empty-body]
    """Contribute backends: the runtimes that execute operations on devices.

    Return :class:`prism_core.extending.Backend` instances.  Creating one must be cheap: import the
    framework in :meth:`~prism_core.extending.Backend.availability` and the array methods, not in
    ``__init__``.  Backend names are unique across plugins; a second backend with a taken name
    fails its plugin.

    :returns: a sequence of :class:`prism_core.extending.Backend`.
    """


@hookspec
def prism_variants() -> Sequence[Variant]:  # type: ignore[empty-body]
    """Contribute variants of operations: implementations with requirements on the device.

    Called once at discovery time.  Return :class:`prism_core.extending.Variant` instances.  Each
    names the operation it implements (``"matmul"``), the backend it runs on, a requirement mapping
    on the device (see docs/device-files.md, "Requirements") and a priority, and optionally a
    per-call check of the arguments (``can_run``) and ``dtype_support`` (the device must
    accelerate the op in the arguments' data type).  The variants join their operations when
    plugins are discovered: for every call, dispatch ranks them with the op's other variants
    and runs the best one eligible for the devices in scope, and ``prism explain`` says why
    (docs/dispatch.md).  Name implementations as ``"module:attribute"`` strings, so that
    discovery imports no framework.

    :returns: a sequence of :class:`prism_core.extending.Variant`.
    """


@hookspec(firstresult=True)
def prism_ranker() -> Any:
    """Order the eligible candidates of a call beyond their declared priority.

    Called once per plugin set, when a call first has candidates to order; the first plugin
    that answers ranks every call.  Where none answers, Prism ranks by tuned times, the
    performance model and execution policies (docs/performance.md).  Return an object with
    ``rank(request)``, ``revision()`` and ``sizes_matter(op)``, as
    ``prism_core.kernel.dispatch.ranking.Ranker`` describes (docs/architecture.md, "Extension
    points").

    :returns: the ranker, or ``None`` to leave ranking to another plugin.
    """


@hookspec
def prism_detect_devices(library: DeviceLibrary) -> Detection:  # type: ignore[empty-body]
    """Detect the devices of this plugin's kind that are present on this host.

    Called when the host is inspected, never at import.  Use cheap checks first (is the driver
    library there?) and never raise for "no device": return an empty detection with a reason.

    A backend on NVIDIA GPUs can return ``prism_core.nvidia_smi.detect(library)`` (the driver's
    ``nvidia-smi`` asked; no framework imported).  Give each device its ``uuid`` where you know
    it: a device two plugins report with one UUID is present once, as the first plugin's.

    :param library: the device library, to check that the device types you report exist.
    :returns: a :class:`prism_core.extending.Detection` listing
    :class:`prism_core.extending.DetectedDevice` (each
        names the ``device_type`` of its description) and, when the list is empty, a ``reason``.
    """
