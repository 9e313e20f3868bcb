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
        "import sys, json, prism_core; n = len(prism_core.hardware.devices()); "
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

    for name in prism_core.__all__:
        assert getattr(prism_core, name) is not None
    assert set(prism_core.__all__) <= set(dir(prism_core))
    with pytest.raises(AttributeError, match="not_a_name"):
        prism_core.not_a_name  # noqa: B018


def test_no_module_is_imported_back_by_what_it_imports() -> None:
    """No import cycle among prism_core's modules, package ``__init__`` files included, counting
    imports inside functions and under ``TYPE_CHECKING`` (import-linter's ``acyclic_siblings``
    contract sees cycles between siblings only, not through a package's own ``__init__``)."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the dev extra)")
    graph = grimp.build_graph("prism_core", exclude_type_checking_imports=False, cache_dir=None)
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycles.append(" -> ".join((importer, *back)))
    assert cycles == []
