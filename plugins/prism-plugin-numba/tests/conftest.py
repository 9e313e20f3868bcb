"""The tests load the plugin the way users get it: installed, through its entry point.

Every test (function scope, so that these tests can run inside the repository's whole suite,
between tests that configure Prism otherwise) loads only this plugin (``PRISM_PLUGINS=numba``
with autoload off), strictly (``PRISM_STRICT_PLUGINS=1``), with a private validation cache and
no user search path or block list; Prism's plugin set and device library are rebuilt before
the test and dropped after it.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Iterator
from pathlib import Path

import pytest

import prism_core
import prism_core._description.library as library
import prism_core._knowledge.plugins as plugins

INSTALL = (
    "the numba plugin is not installed in this environment; install it first: "
    "`pip install -e plugins/prism-plugin-numba` from the repository root "
    "(`.venv/bin/pip install -e plugins/prism-plugin-numba` in the dev environment)"
)


@functools.cache
def _installed() -> str | None:
    """``None`` when the entry point ``numba`` of ``prism.plugins`` is installed, else why."""
    found = importlib.metadata.entry_points(group="prism.plugins", name="numba")
    if not found:
        return f"{INSTALL}: no entry point 'numba' in the group 'prism.plugins'"
    target = next(iter(found)).value
    if target != "prism_plugin_numba.plugin":
        return f"{INSTALL}: the entry point 'numba' names {target!r}, not this plugin"
    return None


class _NotInstalled(pytest.Item):
    """Stands for a test module that cannot be imported without the plugin: fails, saying how
    to install it (instead of an ImportError while collecting)."""

    def runtest(self) -> None:
        pytest.fail(_installed() or INSTALL, pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.path.name}: prism-plugin-numba is not installed"


class _ModuleWithoutPlugin(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield _NotInstalled.from_parent(self, name="prism-plugin-numba-is-installed")


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    """The test modules import the plugin: without it, each is one failing test that says how
    to install it."""
    if _installed() is None:
        return None
    return _ModuleWithoutPlugin.from_parent(parent, path=module_path)


def _forget() -> None:
    library._default = None
    plugins._current = None
    plugins._warned.clear()
    prism_core.reset_fallbacks()


@pytest.fixture(autouse=True)
def _only_this_plugin(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    problem = _installed()
    if problem:
        pytest.fail(problem, pytrace=False)
    for name in ("PRISM_HARDWARE_PATH", "PRISM_BLOCK_PLUGINS", "PRISM_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path_factory.mktemp("prism-cache")))
    monkeypatch.setenv("PRISM_PLUGINS", "numba")
    monkeypatch.setenv("PRISM_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PRISM_STRICT_PLUGINS", "1")
    _forget()
    yield
    _forget()
