"""The plugin contract reads like documentation, and the author guide is generated from it."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pluggy

import prism_core
from prism_core.kernel.contract import hookspecs

from .conftest import REPO

HOOKS = [n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("prism_")]


def test_the_contract_has_the_hooks_of_the_design() -> None:
    assert set(HOOKS) == {
        "prism_plugin_info",
        "prism_hardware_dirs",
        "prism_backends",
        "prism_variants",
        "prism_detect_devices",
        "prism_ranker",
    }


def test_every_hook_is_a_documented_spec() -> None:
    for name in HOOKS:
        fn = getattr(hookspecs, name)
        assert getattr(fn, "prism_spec", None) is not None, f"{name} is not marked @hookspec"
        doc = inspect.getdoc(fn) or ""
        assert ":returns:" in doc, f"{name} does not say what it returns"
        assert len(doc.split()) >= 25, f"{name} is not documented"


def test_hookimpl_is_the_public_marker() -> None:
    assert isinstance(prism_core.extending.hookimpl, pluggy.HookimplMarker)
    assert prism_core.extending.hookimpl.project_name == hookspecs.PROJECT == "prism"


def test_author_guide_hook_reference_is_in_sync() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "docs" / "gen_hook_reference.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    guide = (REPO / "docs" / "writing-a-plugin.md").read_text(encoding="utf-8")
    for name in HOOKS:
        assert f"### `{name}(" in guide


def test_the_variants_hook_says_what_dispatch_does_with_them() -> None:
    """The contract describes the hooks as they are, not as a plan."""
    for name in HOOKS:
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        for stale in ("later release", "until then", "only counted"):
            assert stale not in doc, f"{name}: {stale!r}"
    doc = inspect.getdoc(hookspecs.prism_variants) or ""
    for part in ("prism_core.extending.Variant", "can_run", "dtype_support", "docs/dispatch.md"):
        assert part in doc, part
    assert "Sequence[Variant]" in str(inspect.signature(hookspecs.prism_variants))
