"""A plugin's own tests, run on the plugin as users get it: installed, found through its entry
point, alone (:func:`isolated_plugin`)."""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["isolated_plugin"]


def isolated_plugin(name: str, module: str) -> tuple[Any, Callable[..., Any]]:
    """The conftest of a plugin's test suite: ``(fixture, pytest_pycollect_makemodule)``.

    In ``tests/conftest.py`` of a plugin whose entry point ``name`` (group ``prism.plugins``)
    names ``module``::

        from prism_core.testing import isolated_plugin

        only_this_plugin, pytest_pycollect_makemodule = isolated_plugin(
            "acme", "prism_plugin_acme.plugin"
        )

    * the fixture (autouse, function scope, so that the tests can run inside a larger suite
      between tests that configure Prism otherwise) loads only this plugin
      (``PRISM_PLUGINS=name`` with autoload off), strictly (``PRISM_STRICT_PLUGINS=1``), with a
      private validation cache and no user search path or block list; Prism's plugin set and
      device library are rebuilt before each test and dropped after it;
    * the collection hook makes each test module one failing test that says how to install the
      plugin, when its entry point is missing or names another module (instead of an
      ``ImportError`` while collecting).
    """
    install = (
        f"the {name} plugin is not installed in this environment; install it first: "
        f"`pip install -e plugins/prism-plugin-{name}` from the repository root "
        f"(`.venv/bin/pip install -e plugins/prism-plugin-{name}` in the dev environment)"
    )

    @functools.cache
    def problem() -> str | None:
        """``None`` when the entry point ``name`` of ``prism.plugins`` names ``module``, else
        why not."""
        found = importlib.metadata.entry_points(group="prism.plugins", name=name)
        if not found:
            return f"{install}: no entry point {name!r} in the group 'prism.plugins'"
        target = next(iter(found)).value
        if target != module:
            return f"{install}: the entry point {name!r} names {target!r}, not this plugin"
        return None

    import pytest

    class NotInstalled(pytest.Item):
        """Stands for a test module that cannot be imported without the plugin."""

        def runtest(self) -> None:
            pytest.fail(problem() or install, pytrace=False)

        def reportinfo(self) -> tuple[Path, int | None, str]:
            return self.path, None, f"{self.path.name}: prism-plugin-{name} is not installed"

    class ModuleWithoutPlugin(pytest.File):
        def collect(self) -> Iterator[pytest.Item]:
            yield NotInstalled.from_parent(self, name=f"prism-plugin-{name}-is-installed")

    def pytest_pycollect_makemodule(
        module_path: Path, parent: pytest.Collector
    ) -> pytest.File | None:
        if problem() is None:
            return None
        return ModuleWithoutPlugin.from_parent(parent, path=module_path)

    @pytest.fixture(autouse=True)
    def only_this_plugin(
        monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[None]:
        why = problem()
        if why:
            pytest.fail(why, pytrace=False)
        for variable in ("PRISM_HARDWARE_PATH", "PRISM_BLOCK_PLUGINS", "PRISM_NO_CACHE"):
            monkeypatch.delenv(variable, raising=False)
        monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path_factory.mktemp("prism-cache")))
        monkeypatch.setenv("PRISM_PLUGINS", name)
        monkeypatch.setenv("PRISM_DISABLE_PLUGIN_AUTOLOAD", "1")
        monkeypatch.setenv("PRISM_STRICT_PLUGINS", "1")
        _forget()
        yield
        _forget()

    return only_this_plugin, pytest_pycollect_makemodule


def _forget() -> None:
    """Drop Prism's plugin set, device library, plugin warnings and fallback records: the next
    use rebuilds them from the environment."""
    import prism_core
    from prism_core.kernel.description.library import forget_default_library
    from prism_core.kernel.plugins import forget_plugins

    forget_default_library()
    forget_plugins()
    prism_core.reset_fallbacks()
