"""The tests load the plugin the way users get it: installed, through its entry point.

Every test runs with only this plugin and the genomics plugin it depends on loaded
(``PRISM_PLUGINS=torch,genomics`` with autoload off: the latter declares the alignment op of
the GPU kernel, with its reference),
strictly (``PRISM_STRICT_PLUGINS=1``), with a private validation cache and no user search path,
and with Prism's plugin set and device library discovered afresh before and after: so the tests
run the same on their own (``cd plugins/prism-plugin-torch && python -m pytest``) and inside the
repository's whole test run, whatever ran before them.

The helpers the tests share are in ``torch_testing.py``; the ``gpu`` marker (tests that need a
real NVIDIA GPU) is registered here.  Where the plugin is not installed, only
``test_torch_installed.py`` is collected, and fails saying how to install it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from torch_testing import ENV, INSTALL, REMOVED

import prism_core
import prism_core.kernel.description.library as _library
import prism_core.kernel.plugins as _plugins

#: Whether the plugin is installed (its package and its entry point), without importing it.
INSTALLED = importlib.util.find_spec("prism_plugin_torch") is not None and any(
    ep.name == "torch" for ep in importlib.metadata.entry_points(group="prism.plugins")
)
if not INSTALLED:
    # Their imports would fail one by one; test_torch_installed.py says what to do, once.
    collect_ignore = [
        "test_torch_backend.py",
        "test_torch_conformance.py",
        "test_torch_cuda.py",
        "test_torch_ops.py",
        "test_torch_plugin.py",
    ]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gpu: needs an NVIDIA GPU that torch can use (skipped with the reason without one)",
    )


def _forget_plugins() -> None:
    _plugins._current = None
    _library._default = None
    _plugins._warned.clear()  # each test sees the once-per-process plugin warnings afresh


@pytest.fixture(scope="session")
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private validation cache, shared by the tests of the session (each test would
    otherwise validate the whole device library again)."""
    return tmp_path_factory.mktemp("prism-cache")


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch: pytest.MonkeyPatch, _cache_dir: Path) -> Iterator[None]:
    for name in REMOVED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRISM_CACHE_DIR", str(_cache_dir))
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    _forget_plugins()
    try:
        record = prism_core.extending.plugins().records["torch"]
    except prism_core.extending.PluginError as exc:
        _forget_plugins()
        pytest.fail(f"{INSTALL}: {exc}", pytrace=False)
    assert record.status == "loaded", record.reason
    yield
    _forget_plugins()
