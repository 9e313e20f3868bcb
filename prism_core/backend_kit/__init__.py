"""Helpers for backend authors: what the torch, CuPy and SciPy plugins share.

Importing this module is cheap and imports no array framework, so a plugin's hooks may use it
at discovery.  It holds what every GPU or framework backend needs and would otherwise copy:

* :class:`NamespaceBackend` and :class:`Target` (``namespace.py``): a library that speaks the
  Array API (``jax.numpy``, array-api-compat's namespaces) as a backend, a variant for every op
  of the standard with Prism's semantics, and per-op overrides and declines;
  :class:`Decline` (``declines.py``), a decline said as data (by dtype kind, dtype, keyword or
  empty input); ``adapters`` (``adapters.py``), the standard's signatures over a NumPy-like
  library's (``NamespaceBackend.adapts``);
* probing a framework without ever raising (:func:`import_framework`, :func:`first_line`,
  :func:`probe_library`), and which builds of it are installed without importing it
  (:func:`installed_distributions`);
* batches on the host's CPUs: :func:`usable_cpus`, :func:`thread_pool` (kept pools) and
  :func:`balanced_chunks` (a packed batch cut into runs of about equal size);
* :class:`HostLibraryBackend`, the base of backends that compute on NumPy arrays with a library
  of their own (SciPy, parasail, Numba): availability and NumPy's array methods;
* NumPy's words for the caller mistakes frameworks report differently
  (:func:`broadcast_shapes`, :func:`linalg_error`), so that a caller's mistake is the caller's
  ``ValueError`` on every backend and never looks like a backend failure to dispatch;
* ``can_run`` helpers: :func:`size_check` (a factory) and :func:`array_arguments` (the arrays of
  a call, in sequences and keywords too);
* the result tuples of the decompositions, with NumPy's field names (:class:`SVDResult`, ...);
* the result tuples of the ``unique_*`` functions, with the standard's (and NumPy 2's) field
  names (:class:`UniqueAllResult`, :class:`UniqueCountsResult`, :class:`UniqueInverseResult`);
* :func:`dtype_name`, Prism's name for any framework's dtype;
* words for messages: :func:`did_you_mean` (the close matches of a mistyped name) and
  :func:`display_path` (a path as a user should see it);
* :func:`requested_device`, what a creation function's ``device=`` asks of a backend, and
  :func:`host_only`, the check of the backends that create in host memory only;
* :class:`Examples`, the example arguments of an op a plugin declares
  (``prism_core.extending.operation(..., examples=...)``), which ``prism bench`` and
  ``prism.tune(op, sizes=...)`` measure it on.

The pattern the bundled plugins follow (docs/writing-a-plugin.md, "Sharing code between
backends"): variants are named lazily (``"prism_plugin_scipy.ops:linalg_svd"``), the backend imports
its framework in :meth:`~prism_core.extending.Backend.availability` and keeps the module, and op
functions check arguments in NumPy's words before calling the framework.
"""

from __future__ import annotations

from prism_core.backend_kit import adapters
from prism_core.backend_kit._common import (
    HostLibraryBackend,
    array_arguments,
    balanced_chunks,
    broadcast_shapes,
    first_line,
    import_framework,
    installed_distributions,
    linalg_error,
    probe_library,
    shape_of,
    size_check,
    thread_pool,
)
from prism_core.backend_kit.declines import Decline
from prism_core.backend_kit.namespace import NamespaceBackend, Target
from prism_core.kernel.config import usable_cpus
from prism_core.kernel.contract.device_argument import host_only, requested_device
from prism_core.kernel.contract.results import (
    EighResult,
    EigResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    UniqueAllResult,
    UniqueCountsResult,
    UniqueInverseResult,
)
from prism_core.kernel.description.dtypes import dtype_name
from prism_core.kernel.errors import did_you_mean, display_path
from prism_core.kernel.op_examples import Examples

__all__ = [
    "Decline",
    "EigResult",
    "EighResult",
    "Examples",
    "HostLibraryBackend",
    "NamespaceBackend",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "Target",
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "adapters",
    "array_arguments",
    "balanced_chunks",
    "broadcast_shapes",
    "did_you_mean",
    "display_path",
    "dtype_name",
    "first_line",
    "host_only",
    "import_framework",
    "installed_distributions",
    "linalg_error",
    "probe_library",
    "requested_device",
    "shape_of",
    "size_check",
    "thread_pool",
    "usable_cpus",
]
