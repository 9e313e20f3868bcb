"""The kernel's extension points as the contract types them (prism_core/kernel/contract/
extension_points.py): public in ``prism_core.extending``, the types of the hook specifications,
satisfied by dispatch's own classes; and the one place the kernel reaches a feature by name,
Prism's own ranker (``DEFAULT_RANKER``), checked here since import-linter cannot see it."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import sys
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.contract import extension_points, hookspecs
from prism_core.kernel.dispatch import ranking

from .conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tests run on 3.11 and later
    tomllib = pytest.importorskip("tomli")

KERNEL = REPO / "prism_core" / "kernel"
_ids = itertools.count()


def test_the_extension_points_are_public_where_plugins_import_them() -> None:
    for name in ("Array", "Ranker", "RankRequest", "Ranked", "FirstUse", "Planner", "Rescuer"):
        public = getattr(prism.extending, name)
        assert public.__module__ == "prism_core.extending", name
        assert name in prism.extending.__all__


def test_the_ranker_hook_returns_the_ranker_protocol() -> None:
    returns = inspect.signature(hookspecs.prism_ranker).return_annotation
    assert returns == "Ranker | None"
    assert "Ranker" in vars(extension_points)


def test_the_default_ranker_names_a_ranker_of_a_feature_above_the_kernel() -> None:
    module, _, name = ranking.DEFAULT_RANKER.partition(":")
    made = getattr(importlib.import_module(module), name)()
    for method in ("rank", "revision", "sizes_matter"):
        assert callable(getattr(made, method)), method
    # The feature is one the kernel may not import (import-linter's contract): the string is
    # the only way from the kernel to it, through the ranking extension point.
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    (kernel_contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "forbidden" and c["source_modules"] == ["prism_core.kernel"]
    ]
    assert any(
        module == f or module.startswith(f + ".") for f in kernel_contract["forbidden_modules"]
    )


def test_the_kernel_imports_by_name_only_at_its_documented_places() -> None:
    """Plugins (builtin and entry points), variants given as ``"module:attribute"`` and the
    default ranker: nothing else imports by name."""
    found = set()
    for path in KERNEL.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            named = getattr(node, "attr", None) or getattr(node, "id", None)
            if isinstance(node, (ast.Attribute, ast.Name)) and named == "import_module":
                found.add(path.relative_to(KERNEL).as_posix())
    assert found == {
        "plugins.py",
        "distributions.py",
        "contract/variant.py",
        "dispatch/ranking.py",
    }


class _Reversed:
    """A plugin's ranker: the declared order reversed."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def rank(self, request: Any) -> Any:
        self.requests.append(request)
        basis = prism.tuning.Basis("measured", "reversed by the test ranker")
        return prism.extending.Ranked(tuple(reversed(request.ranked)), basis)

    def revision(self) -> object:
        return self

    def sizes_matter(self, op: str) -> bool:
        return False


def test_a_plugin_ranker_orders_a_calls_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"test_extension_points.scale{next(_ids)}"

    @prism.extending.operation(name=name, array_args=(0,))
    def scale(x: Any) -> Any:
        return 2 * x

    @scale.variant(requires={"kind": "cpu"}, priority=1, name=f"{name}.cpu")
    def on_cpu(x: Any) -> Any:
        return 2 * x

    chosen = _Reversed()

    class Plugin:
        @prism.extending.hookimpl
        def prism_ranker(self) -> Any:
            return chosen

    manager = prism.extending.plugins().manager
    plugin = Plugin()
    manager.register(plugin)
    monkeypatch.setattr(ranking, "_ranker", (None, None))
    try:
        x = np.arange(3.0)
        decision = prism.explain(scale, x)
        assert decision.chosen == f"{name}.reference"
        assert decision.basis.note == "reversed by the test ranker"
        np.testing.assert_array_equal(scale(x), 2 * x)
        request = chosen.requests[-1]
        assert request.op.name == name
        assert list(request.arrays) == [x]
        assert list(request.dtypes) == ["fp64"]  # the vocabulary of device files
    finally:
        manager.unregister(plugin)
