"""The validation cache: what its key covers, entries it must not trust, and no churn.

The cache is a file in the user's cache directory: anything may have been written there (another
version of Prism, a crash, a person).  Poisoned entries are made the hard way: the cache file is
rewritten with a *valid* checksum around a different or malformed document, so that only the
checks on each entry stand between it and the user.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from prism_core.hardware import DeviceLibrary, SearchEntry
from prism_core.kernel.description import cache as cache_module
from prism_core.kernel.description.cache import ValidationCache, digest

from .conftest import HARDWARE, SEED

REPO = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 120

DEVICE = """\
device_type: lab.poison
kind: gpu
compute_units: 7
memory_hierarchy:
  - {level: global, size_bytes: 1000, bandwidth_gbps: 10}
features:
  - {name: tensor_cores, version: 1, operations: [{name: matmul, data_types: [fp16]}]}
"""
OTHER = "device_type: lab.other\nkind: cpu\ncompute_units: 3\n"


# -- reading and rewriting the cache file the hard way ---------------------------------------


def cache_file(cache_dir: Path) -> Path:
    [path] = sorted(cache_dir.glob("device-files-*.json"))
    return path


def read_entries(cache_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cache file's envelope and its entries (stored as a JSON text inside it)."""
    raw = json.loads(cache_file(cache_dir).read_text(encoding="utf-8"))
    return raw, json.loads(raw["entries"])


def write_entries(cache_dir: Path, raw: dict[str, Any], entries: dict[str, Any]) -> None:
    """Rewrite the entries with a valid checksum, as a careful poisoner would."""
    text = json.dumps(entries, separators=(",", ":"))
    raw["entries"] = text
    raw["checksum"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cache_file(cache_dir).write_text(json.dumps(raw), encoding="utf-8")


def documents(value: Any) -> Iterator[dict[str, Any]]:
    """The documents in one entry, whatever envelope the entry has."""
    if isinstance(value, dict):
        if "device_type" in value:
            yield value
        else:
            for v in value.values():
                yield from documents(v)


def document_of(entries: dict[str, Any], device_type: str) -> dict[str, Any]:
    for value in entries.values():
        for doc in documents(value):
            if doc.get("device_type") == device_type:
                return doc
    raise AssertionError(f"no cache entry for {device_type}")


def key_of(entries: dict[str, Any], device_type: str) -> str:
    for key, value in entries.items():
        if any(doc.get("device_type") == device_type for doc in documents(value)):
            return key
    raise AssertionError(f"no cache entry for {device_type}")


# -- the command line -------------------------------------------------------------------------


def run_prism(tmp_path: Path, *args: str, hardware: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PRISM_DEBUG", "PRISM_NO_CACHE")}
    env.update(PRISM_CACHE_DIR=str(tmp_path / "cache"), PRISM_HARDWARE_PATH=str(hardware))
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


Poison = Callable[[dict[str, Any]], None]

POISONS: dict[str, Poison] = {
    "features not a list": lambda e: document_of(e, "lab.poison").update(features="oops"),
    "memory level with an unknown field": lambda e: document_of(e, "lab.poison").update(
        memory_hierarchy=[{"level": "global", "size_bytes": 1, "hbm": True}]
    ),
    "compute_units a string": lambda e: document_of(e, "lab.poison").update(compute_units="7"),
    "kind not a kind": lambda e: document_of(e, "lab.poison").update(kind="toaster"),
    "product_names not a regex": lambda e: document_of(e, "lab.poison").update(
        detection={"product_names": ["(unclosed"]}
    ),
    "renamed": lambda e: document_of(e, "lab.poison").update(device_type="lab.renamed"),
    "renamed to a shipped device": lambda e: document_of(e, "lab.poison").update(
        device_type="nvidia.h100-sxm"
    ),
    "re-parented": lambda e: document_of(e, "lab.poison").update(extends="nvidia.hopper"),
    "entry of another file": lambda e: e.__setitem__(
        key_of(e, "lab.poison"), e[key_of(e, "lab.other")]
    ),
}


@pytest.mark.parametrize("poison", list(POISONS))
def test_poisoned_entry_is_dropped_and_revalidated(tmp_path: Path, poison: str) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "poison.yaml").write_text(DEVICE, encoding="utf-8")
    (lib / "other.yaml").write_text(OTHER, encoding="utf-8")
    cold = run_prism(tmp_path, "devices", "--json", hardware=lib)
    assert cold.returncode == 0, cold.stderr
    truth = run_prism(tmp_path, "show", "lab.poison", "--json", hardware=lib)
    assert truth.returncode == 0, truth.stderr
    raw, entries = read_entries(tmp_path / "cache")
    POISONS[poison](entries)
    write_entries(tmp_path / "cache", raw, entries)
    for _ in range(2):  # the second run reads the repaired cache
        warm = run_prism(tmp_path, "devices", "--json", hardware=lib)
        assert warm.returncode == 0, warm.stderr
        found = {d["device_type"]: d for d in json.loads(warm.stdout)}
        assert "lab.renamed" not in found
        assert found["lab.poison"]["compute_units"] == 7
        assert found["lab.poison"]["kind"] == "gpu"
        assert found["lab.poison"]["extends"] == []
        assert found["lab.other"]["compute_units"] == 3
        assert found["nvidia.h100-sxm"]["name"] == "NVIDIA H100 SXM5 80GB"
        show = run_prism(tmp_path, "show", "lab.poison", "--json", hardware=lib)
        assert show.returncode == 0, show.stderr
        assert json.loads(show.stdout) == json.loads(truth.stdout)


def test_poisoned_entry_is_counted_replaced_and_then_trusted(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "poison.yaml").write_text(DEVICE, encoding="utf-8")
    entries_ = [SearchEntry(tmp_path / "d", "user")]
    cache_dir = Path(os.environ["PRISM_CACHE_DIR"])
    DeviceLibrary(entries_)
    raw, entries = read_entries(cache_dir)
    document_of(entries, "lab.poison")["features"] = [{"name": "x"}]
    write_entries(cache_dir, raw, entries)
    poisoned = DeviceLibrary(entries_)
    assert poisoned.cache is not None
    assert (poisoned.cache.hits, poisoned.cache.misses, poisoned.cache.dropped) == (0, 1, 1)
    assert poisoned.get("lab.poison").has_feature("tensor_cores")
    repaired = DeviceLibrary(entries_)
    assert repaired.cache is not None
    assert (repaired.cache.hits, repaired.cache.misses, repaired.cache.dropped) == (1, 0, 0)


def test_every_shipped_file_is_trusted_from_the_cache() -> None:
    # The checks on a cached entry must accept what validation produced, or every start would
    # validate again (costing speed, not correctness, so only this test would notice).
    cold = DeviceLibrary([SearchEntry(HARDWARE, "builtin"), SearchEntry(SEED, "user")])
    assert cold.cache is not None and cold.cache.misses > 40
    warm = DeviceLibrary([SearchEntry(HARDWARE, "builtin"), SearchEntry(SEED, "user")])
    assert warm.cache is not None
    assert (warm.cache.misses, warm.cache.dropped) == (0, 0)
    assert warm.cache.hits == cold.cache.misses


# -- the key covers everything validation depends on ------------------------------------------


def test_cache_key_covers_the_schema_and_the_validation_code() -> None:
    schema = (REPO / "schemas" / "device.schema.json").read_bytes()
    cache = ValidationCache(None, schema)
    assert cache_module.validation_code_digest() in cache.key
    assert digest(schema)[:16] in cache.key
    assert ValidationCache(None, schema + b" ").key != cache.key


def test_validation_code_digest_follows_each_source(tmp_path: Path) -> None:
    package = Path(cache_module.__file__).parent
    for name in cache_module.VALIDATION_SOURCES:
        (tmp_path / name).write_bytes((package / name).read_bytes())
    before = cache_module.validation_code_digest(tmp_path)
    assert before == cache_module.validation_code_digest(package)
    for name in cache_module.VALIDATION_SOURCES:
        source = tmp_path / name
        original = source.read_bytes()
        source.write_bytes(original + b"\n# a change\n")
        assert cache_module.validation_code_digest(tmp_path) != before, name
        source.write_bytes(original)
    (tmp_path / cache_module.VALIDATION_SOURCES[0]).unlink()
    assert cache_module.validation_code_digest(tmp_path) is None  # no source: no cache


def test_validation_sources_cover_every_module_validation_imports() -> None:
    """A module the validators import is part of what decides validity: it must be hashed.
    The seed and every shipped file are read, so that the checks of format 2's keys, imported
    only for a file that has them, are among the modules seen."""
    code = (
        "import sys\n"
        "from prism_core.kernel.description.device_files import SearchEntry, read_device_file\n"
        "from pathlib import Path\n"
        f"files = [Path({str(SEED)!r}), *sorted(Path({str(HARDWARE)!r}).rglob('*.yaml'))]\n"
        "for path in files:\n"
        "    dev, problems = read_device_file(path, SearchEntry(Path('.'), 'x'), None)\n"
        "    assert dev is not None and not problems, problems\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('prism_core'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert proc.returncode == 0, proc.stderr
    imported = set(proc.stdout.split())
    hashed = {
        f"prism_core.kernel.description.{n.removesuffix('.py')}"
        for n in cache_module.VALIDATION_SOURCES
    }
    assert hashed <= imported
    # Modules that cannot change what a valid file becomes: package markers, the version (in
    # the key on its own), errors and messages, configuration (the schema is hashed itself),
    # and the library's resolved model and plugins (used after validation, not in it).
    unrelated = {
        "prism_core",
        "prism_core.kernel",
        "prism_core.kernel.version",
        "prism_core.kernel.errors",
        "prism_core.kernel.public",  # where public classes say they live
        "prism_core.kernel.events",
        "prism_core.kernel.config",
        "prism_core.kernel.description",
        "prism_core.kernel.description.device",
    }
    assert imported - hashed - unrelated == set()


# -- no churn ---------------------------------------------------------------------------------


def test_a_warm_start_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    for i in range(5):
        (tmp_path / "d" / f"f{i}.yaml").write_text(f"device_type: lab.f{i}\n", encoding="utf-8")
    entries = [SearchEntry(tmp_path / "d", "user")]
    DeviceLibrary(entries)
    path = cache_file(Path(os.environ["PRISM_CACHE_DIR"]))
    before = path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino
    warm = DeviceLibrary(entries)
    assert warm.cache is not None and warm.cache.misses == 0
    assert (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino) == before


def test_entries_in_use_are_kept_and_stale_ones_evicted_oldest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "MAX_STALE_ENTRIES", 2)
    directory = tmp_path / "d"
    directory.mkdir()
    entries = [SearchEntry(directory, "user")]

    def generation(n: int) -> list[str]:
        texts = [f"device_type: lab.f{i}\ncompute_units: {n}\n" for i in range(3)]
        for i, text in enumerate(texts):
            (directory / f"f{i}.yaml").write_text(text, encoding="utf-8")
        return [digest(t.encode()) for t in texts]

    first = generation(1)
    DeviceLibrary(entries)
    second = generation(2)
    lib = DeviceLibrary(entries)
    assert lib.cache is not None and lib.cache.misses == 3
    _, stored = read_entries(Path(os.environ["PRISM_CACHE_DIR"]))
    # All three in use, and the two most recent of the three stale ones.
    assert set(second) <= set(stored)
    assert len(stored) == 5 and len(set(first) & set(stored)) == 2
    third = generation(3)
    DeviceLibrary(entries)
    _, stored = read_entries(Path(os.environ["PRISM_CACHE_DIR"]))
    assert set(third) <= set(stored) and len(stored) == 5
    assert not set(first) & set(stored)  # the oldest went first


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_no_revalidation_with_20000_files(tmp_path: Path) -> None:
    directory = tmp_path / "many"
    for i in range(20_000):
        sub = directory / f"{i // 1000:02d}"
        if i % 1000 == 0:
            sub.mkdir(parents=True)
        (sub / f"f{i:05d}.yaml").write_text(f"device_type: lab.f{i:05d}\n", encoding="utf-8")
    entries = [SearchEntry(directory, "user")]
    cold = DeviceLibrary(entries)
    assert cold.cache is not None and cold.cache.misses == 20_000 and len(cold) == 20_000
    for _ in range(2):
        warm = DeviceLibrary(entries)
        assert warm.cache is not None
        assert (warm.cache.hits, warm.cache.misses, warm.cache.dropped) == (20_000, 0, 0)


# -- only this directory's writers are trusted ------------------------------------------------


def test_a_cache_file_signed_elsewhere_is_refused_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache file copied from another cache directory (another key) is used for nothing."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "poison.yaml").write_text(DEVICE, encoding="utf-8")
    entries_ = [SearchEntry(tmp_path / "d", "user")]
    here, there = tmp_path / "here", tmp_path / "there"
    for directory in (there, here):
        monkeypatch.setenv("PRISM_CACHE_DIR", str(directory))
        DeviceLibrary(entries_)
    assert (here / "device-files.key").read_bytes() != (there / "device-files.key").read_bytes()
    raw, entries = read_entries(there)
    document_of(entries, "lab.poison")["compute_units"] = 9  # valid, and wrong
    text = json.dumps(entries, separators=(",", ":"))
    cache_file(here).write_text(json.dumps({**raw, "entries": text}), encoding="utf-8")
    copied = DeviceLibrary(entries_)
    assert copied.cache is not None
    assert (copied.cache.hits, copied.cache.misses, copied.cache.dropped) == (0, 1, 1)
    assert copied.get("lab.poison").compute_units == 7
    repaired = DeviceLibrary(entries_)
    assert repaired.cache is not None
    assert (repaired.cache.hits, repaired.cache.misses, repaired.cache.dropped) == (1, 0, 0)


def test_without_its_key_the_cache_trusts_nothing(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "poison.yaml").write_text(DEVICE, encoding="utf-8")
    entries_ = [SearchEntry(tmp_path / "d", "user")]
    DeviceLibrary(entries_)
    (Path(os.environ["PRISM_CACHE_DIR"]) / "device-files.key").unlink()
    lib = DeviceLibrary(entries_)
    assert lib.cache is not None and (lib.cache.hits, lib.cache.misses) == (0, 1)
    again = DeviceLibrary(entries_)
    assert again.cache is not None and (again.cache.hits, again.cache.misses) == (1, 0)


# -- new checks reach files cached before them --------------------------------------------------


@pytest.mark.parametrize(
    ("module", "check", "body", "says"),
    [
        (
            "sparsity",
            "sparsity_problems",
            "sparsity: [{pattern: '2:4', data_types: [fp16], speedup: 4}]\n",
            "speedup 4 is more than pattern 2:4 can give",
        ),
        (
            "numeric_formats",
            "format_problems",
            "numeric_formats: [{name: fp6, exponent_bits: 9, mantissa_bits: 9}]\n",
            "fp6 values are 6 bits",
        ),
        (
            "throughput",
            "rates_above_peak",
            "peak_tflops: {fp32: 10}\nthroughput: [{unit: vector, data_type: fp32, tflops: 500}]\n",
            "is above peak_tflops.fp32",
        ),
    ],
)
def test_a_file_cached_before_a_check_existed_gets_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, check: str, body: str, says: str
) -> None:
    """A cached entry is a document that validating the file gave, trusted under the digest of
    the code that validated it: code that lacked a check had another digest, so its entries are
    not used and the file is validated (and refused) by today's checks."""
    import importlib

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.yaml").write_text(
        "format_version: 2\ndevice_type: lab.x\n" + body, encoding="utf-8"
    )
    entries = [SearchEntry(tmp_path / "d", "user")]
    checks = importlib.import_module(f"prism_core.kernel.description.{module}")
    with monkeypatch.context() as m:
        m.setattr(checks, check, lambda *_: iter(()))  # the code before the check
        m.setattr(cache_module, "_own_code_digest", lambda: "before-the-check")
        before = DeviceLibrary(entries)
        assert before.problems == [] and "lab.x" in before
    after = DeviceLibrary(entries)
    assert after.cache is not None and (after.cache.hits, after.cache.misses) == (0, 1)
    assert "lab.x" not in after
    assert [says in p.message for p in after.problems] == [True], after.problems
    assert cache_module.VALIDATION_SOURCES.count(f"{module}.py") == 1  # in the cache's key
