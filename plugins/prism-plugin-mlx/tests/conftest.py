"""The tests load the plugin the way users get it: installed, through its entry point, alone
(``prism_core.testing.isolated_plugin``: only this plugin, strictly, a private cache, Prism's
plugin set and device library rebuilt around each test)."""

from __future__ import annotations

from prism_core.testing import isolated_plugin

only_this_plugin, pytest_pycollect_makemodule = isolated_plugin("mlx", "prism_plugin_mlx.plugin")
