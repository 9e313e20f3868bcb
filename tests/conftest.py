"""Shared fixtures: every test runs with its own cache directory and no user search path."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import prism_core._library as library
import prism_core._plugins as plugins

REPO = Path(__file__).resolve().parents[1]
HARDWARE = REPO / "hardware"
SCHEMA = REPO / "schemas" / "device.schema.json"
#: A byte-for-byte copy of ../shared/examples/seed-device.yaml, the original example of the
#: format, so that the tests run in a clone without shared/ (test_seed_copy checks the copy).
SEED = REPO / "tests" / "data" / "seed-device.yaml"
SHARED_SEED = REPO.parent / "shared" / "examples" / "seed-device.yaml"


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path_factory.mktemp("prism-cache")))
    monkeypatch.delenv("PRISM_HARDWARE_PATH", raising=False)
    for name in (
        "PRISM_NO_CACHE",
        "PRISM_STRICT_PLUGINS",
        "PRISM_DISABLE_PLUGIN_AUTOLOAD",
        "PRISM_PLUGINS",
        "PRISM_BLOCK_PLUGINS",
    ):
        monkeypatch.delenv(name, raising=False)
    library._default = None
    plugins._current = None
    yield
    library._default = None
    plugins._current = None


@pytest.fixture
def write_yaml(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a dedented YAML text to ``tmp_path / name`` and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write
