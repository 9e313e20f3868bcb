"""The public API as curated: the top level's names, the feature namespaces, the names that
moved (found where they live now, with a warning), and the generated stub and reference page."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings

import pytest

import prism_core
from prism_core import _api_reference

FEATURES = ("hardware", "tuning", "pipelines", "extending")


def test_the_stub_and_the_reference_page_are_current() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "prism_core._api_reference", "--check"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_top_level_name_loads_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in prism_core.__all__:
            assert getattr(prism_core, name) is not None, name


def test_the_stub_declares_every_top_level_name() -> None:
    stub = _api_reference.stub_text()
    for name in prism_core.__all__:
        assert f" as {name}\n" in stub or f" as {name} " in stub, name


def test_each_feature_name_lives_in_one_namespace() -> None:
    seen: dict[str, str] = {}
    for feature in FEATURES:
        namespace = importlib.import_module(f"prism_core.{feature}")
        for name in namespace.__all__:
            assert getattr(namespace, name) is not None
            assert name not in seen, f"{name} is in prism_core.{seen.get(name)} and {feature}"
            seen[name] = feature


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("tune", "prism_core.tuning.tune"),
        ("get_device", "prism_core.hardware.get_device"),
        ("split", "prism_core.pipelines.split"),
        ("hookimpl", "prism_core.extending.hookimpl"),
        ("policy", "prism_core.choosing"),
        ("plan", "prism_core.tuning.choose_device"),
    ],
)
def test_a_name_that_moved_is_found_with_a_warning_saying_where(old: str, new: str) -> None:
    module, _, name = new.rpartition(".")
    with pytest.warns(DeprecationWarning, match=re.escape(f"prism_core.{old} is {new};")):
        value = getattr(prism_core, old)
    assert value is getattr(importlib.import_module(module), name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        prism_core.no_such_name  # noqa: B018


def test_from_import_of_a_moved_name_warns_at_the_importing_line() -> None:
    with pytest.warns(DeprecationWarning, match="prism_core.tuning.tune") as caught:
        from prism_core import tune  # noqa: F401
    assert caught[0].filename == __file__
