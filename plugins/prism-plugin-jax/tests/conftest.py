"""The tests load the plugin the way users get it: installed, through its entry point, alone
(``prism_core.testing.isolated_plugin``: only this plugin, strictly, a private cache, Prism's
plugin set and device library rebuilt around each test)."""

from __future__ import annotations

import os

from prism_core.testing import isolated_plugin

only_this_plugin, pytest_pycollect_makemodule = isolated_plugin("jax", "prism_plugin_jax.plugin")

# With x64 JAX can compute what NumPy computes, float64 included; the tests of JAX's default,
# without it, run in fresh processes (test_jax_plugin.py).  Set before JAX is imported.
os.environ.setdefault("JAX_ENABLE_X64", "1")
