"""`import prism_core` stays light: no YAML, JSON Schema, NumPy or plugin import at import time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["yaml", "jsonschema", "referencing", "numpy", "platformdirs", "packaging", "torch", "cupy"]


def test_import_prism_core_imports_nothing_heavy() -> None:
    code = (
        "import sys, json; import prism_core; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_warm_start_neither_parses_nor_validates(tmp_path: object) -> None:
    """With the validation cache warm, listing devices imports neither PyYAML nor jsonschema."""
    import os

    env = {**os.environ, "PRISM_CACHE_DIR": str(tmp_path)}
    code = (
        "import sys, json, prism_core; n = len(prism_core.devices()); "
        "print(json.dumps([n, sorted(m for m in ('yaml', 'jsonschema') if m in sys.modules)]))"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            ).stdout
        )
        for _ in range(2)
    ]
    assert runs[0] == [runs[0][0], ["jsonschema", "yaml"]]
    assert runs[1] == [runs[0][0], []]
    assert runs[0][0] >= 24


def test_every_public_name_resolves() -> None:
    import prism_core

    assert set(prism_core._LAZY) | {"__version__", *prism_core._NAMESPACES} == set(
        prism_core.__all__
    )
    for name in prism_core.__all__:
        assert getattr(prism_core, name) is not None
    assert set(prism_core.__all__) <= set(dir(prism_core))
    with pytest.raises(AttributeError, match="not_a_name"):
        prism_core.not_a_name  # noqa: B018
