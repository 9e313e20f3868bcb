"""The tests load the plugin the way users get it: installed, through its entry point.

For the whole session only this plugin is loaded (``PRISM_PLUGINS=cuda``), strictly
(``PRISM_STRICT_PLUGINS=1``), with a private validation cache and no user search path.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import prism_core


@pytest.fixture(scope="session", autouse=True)
def _only_this_plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for name in (
            "PRISM_HARDWARE_PATH",
            "PRISM_BLOCK_PLUGINS",
            "PRISM_DISABLE_PLUGIN_AUTOLOAD",
            "PRISM_NO_CACHE",
        ):
            mp.delenv(name, raising=False)
        mp.setenv("PRISM_CACHE_DIR", str(tmp_path_factory.mktemp("prism-cache")))
        mp.setenv("PRISM_PLUGINS", "cuda")
        mp.setenv("PRISM_STRICT_PLUGINS", "1")
        try:
            prism_core.reload_plugins()
        except prism_core.PluginError as exc:
            pytest.exit(
                "install the plugin before testing it (pip install plugins/prism-plugin-cuda): "
                f"{exc}",
                returncode=1,
            )
        yield


@pytest.fixture(scope="session")
def library(_only_this_plugin: None) -> prism_core.DeviceLibrary:
    """The device library users get: the shipped devices and this plugin's."""
    lib = prism_core.DeviceLibrary()
    assert not lib.problems, "\n".join(str(p) for p in lib.problems)
    return lib
