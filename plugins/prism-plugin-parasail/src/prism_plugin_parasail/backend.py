"""The ``parasail`` backend: parasail's C library on the host CPU, computing on NumPy arrays.

parasail has no array type: its functions take byte strings.  Like the ``scipy`` backend, this
one owns nothing (:meth:`ParasailBackend.owns` is ``False``), takes NumPy arrays and Python
scalars as they are, and its array methods are NumPy's.  What it adds is the alignment
kernels (``prism_plugin_parasail.kernels``, which run the family and lane width that
``prism_plugin_parasail.rule`` picks).

Nothing here imports parasail or NumPy at import time or when the backend is created:
:meth:`ParasailBackend.availability` imports parasail (which loads its C library, about
4 MB, and imports NumPy).
"""

from __future__ import annotations

from typing import Any

from prism_core.backend_kit import HostLibraryBackend

__all__ = ["MIN_PARASAIL", "ParasailBackend"]

#: The oldest parasail whose per-instruction-set kernels and profile functions the plugin
#: binds (``parasail_sw_striped_profile_avx2_256_8`` and the like: parasail 2.x's C library,
#: which the Python package 1.3 ships).
MIN_PARASAIL = "1.3"


class ParasailBackend(HostLibraryBackend):
    """parasail on the host CPU.  Arrays are NumPy arrays; the backend owns none of them."""

    name = "parasail"
    thread_modules = ("parasail",)
    priority = 5
    description = "parasail on the host CPU: striped SIMD Smith-Waterman per instruction set"
    library = "parasail"
    min_version = MIN_PARASAIL
    distribution = "prism-plugin-parasail"

    def capabilities(self) -> dict[str, Any]:
        """parasail's version and C library version, the library's path, which instruction
        sets this CPU executes by parasail's own checks, and the threads a batch uses."""
        import parasail  # type: ignore[import-untyped, unused-ignore]

        from prism_plugin_parasail.kernels import batch_threads, isa_usable
        from prism_plugin_parasail.rule import ISAS

        return {
            "parasail": parasail.__version__,
            "library": ".".join(str(v) for v in parasail.version()),
            "library_path": parasail.get_library(),
            "instruction_sets": {name: isa_usable(name) for name in ISAS},
            "batch_threads": batch_threads(),
        }
