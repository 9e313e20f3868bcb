"""The ops of the Array API families declared as tables in prism-core (issue 12) that this plugin
has variants for, and where each implementation is.

One dict per family: op -> ``"<module>:<attribute>"``, a function of
``prism_plugin_torch.<module>``.  ``variants.py`` makes two variants of each, as of every op:
``torch.<op>`` runs ``<module>.<attribute>`` on the host CPU, and ``torch.cuda.<op>`` runs
``<module>.gpu.<attribute>`` on the GPU (each family module has a ``gpu`` namespace of the same
functions on the GPU).  Torch-free: building the variants imports nothing.
"""

from __future__ import annotations

__all__ = ["FAMILY_FUNCTIONS"]

#: Creation and data-type functions (``prism_plugin_torch.creation``).
CREATION: dict[str, str] = {}
#: Manipulation and indexing functions (``prism_plugin_torch.manipulation``).
MANIPULATION: dict[str, str] = {}
#: Searching, set and sorting functions (``prism_plugin_torch.searching``).
SEARCHING: dict[str, str] = {}
#: Statistical and utility functions (``prism_plugin_torch.statistics``).
STATISTICS: dict[str, str] = {}
#: Linear algebra functions and the ``linalg`` extension (``prism_plugin_torch.linalg``).
LINALG: dict[str, str] = {}
#: The ``fft`` extension (``prism_plugin_torch.fft``).
FFT: dict[str, str] = {}

#: Every family's ops: op -> ``"<module>:<attribute>"``.
FAMILY_FUNCTIONS: dict[str, str] = {
    **CREATION,
    **MANIPULATION,
    **SEARCHING,
    **STATISTICS,
    **LINALG,
    **FFT,
}
