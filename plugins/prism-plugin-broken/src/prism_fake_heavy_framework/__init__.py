"""TEST ONLY: a stand-in for a heavy framework (torch, cupy, jax).

It does nothing heavy.  Having been imported is the record: tests check whether
``"prism_fake_heavy_framework" in sys.modules`` after listing plugins.
"""

from __future__ import annotations

from typing import Any

__version__ = "1.0"


def asarray(obj: Any, dtype: Any = None) -> Any:
    import numpy as np

    return np.asarray(obj, dtype=dtype)
