"""The plugin is installed, through its entry point (the other test modules are collected only
then; see conftest.py)."""

from __future__ import annotations

import importlib.metadata

from torch_testing import INSTALL


def test_the_plugin_is_installed() -> None:
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="prism.plugins")}
    assert found.get("torch") == "prism_plugin_torch.plugin", INSTALL
