"""NumPy's Array API namespace (``array_api_compat.numpy``) without ``sqrt``: a library that
lacks one function of the standard (tests/broken_capabilities_plugin.py)."""

from array_api_compat.numpy import *  # noqa: F403

del sqrt  # noqa: F821
