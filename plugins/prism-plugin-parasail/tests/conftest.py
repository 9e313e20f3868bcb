"""The tests load the plugin the way users get it: installed, through its entry point, with
only the plugin it depends on (``prism_core.testing.isolated_plugin`` says how: only this
plugin, strictly, a private cache, Prism's plugin set and device library rebuilt around each
test; without the plugin installed, each test module is one failing test that says how to
install it).  The genomics plugin is loaded beside it: it declares the ops this plugin's
variants extend and contributes their NumPy references, which the tests compare with."""

from __future__ import annotations

import pytest

from prism_core.testing import isolated_plugin

only_this_plugin, pytest_pycollect_makemodule = isolated_plugin(
    "parasail", "prism_plugin_parasail.plugin"
)


@pytest.fixture(autouse=True)
def with_the_genomics_plugin(only_this_plugin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """This plugin and prism-plugin-genomics (a dependency), both loaded strictly."""
    monkeypatch.setenv("PRISM_PLUGINS", "parasail,genomics")
