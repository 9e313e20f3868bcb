"""The tuning store: entries and their JSON, the records dispatch reads, the host fingerprint, and
the cache file under the faults it must survive (damaged, foreign, read-only, unreachable,
locked, written by several processes at once).

Real files and real processes throughout: nothing of the filesystem is mocked.  The read-only
directory is read-only for real: as root (who ignores permission bits) the writer runs in a
child process that has dropped to an unprivileged user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import filelock  # noqa: F401 - loaded before any fork: the unprivileged child cannot import it
import pytest

from prism_core._tuning import tuning_records as tuning
from prism_core._tuning.fingerprint import Fingerprint
from prism_core._tuning.tuning_entries import TuningEntry, TuningRecords
from prism_core._tuning.tuning_records import (
    TuningCacheWarning,
    TuningStore,
    bucket_of,
    host_fingerprint,
)
from prism_core.kernel import events as _events

#: The fingerprint of the stores these tests make (a host of their own, cheap to compute).
HERE = Fingerprint.of({"cpu.brand": "Test CPU", "prism": "0", "python": "CPython 3"})
ELSEWHERE = Fingerprint.of({"cpu.brand": "Other CPU", "prism": "0", "python": "CPython 3"})
UNPRIVILEGED = 65534  # "nobody" on Linux


def entry(
    op: str = "matmul",
    *,
    bucket: int = 18,
    device: str = "generic.x86-64-v3",
    dtype: str = "fp64",
    variants: tuple[str, ...] = ("numpy.matmul", "scipy.matmul"),
    winner: str = "scipy.matmul",
    decided: str = "measured",
    times: dict[str, float] | None = None,
) -> TuningEntry:
    if times is None:
        times = {v: (1e-4 if v == winner else 3e-4) for v in variants}
    return TuningEntry(
        op=op,
        device=device,
        dtype=dtype,
        bucket=bucket,
        variants=variants,
        times=times,
        winner=winner,
        decided=decided,
        shapes=((256, 256), (256, 256)),
        repeats=7,
        measured_at=1_790_000_000.0,
    )


def store_in(directory: Path, fingerprint: Fingerprint = HERE, **options: Any) -> TuningStore:
    return TuningStore(directory, fingerprint, **options)


def document(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


# -- size buckets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sizes", "bucket"),
    [
        ((), 0),
        ((0,), 0),
        ((1,), 1),
        ((2,), 2),
        ((3,), 2),
        ((4,), 3),
        ((256 * 256, 256 * 256), 18),
        ((1000 * 1000, 1000 * 1000), 21),
    ],
)
def test_bucket_of(sizes: tuple[int, ...], bucket: int) -> None:
    assert bucket_of(*sizes) == bucket


def test_a_bucket_spans_a_factor_of_two() -> None:
    for total in range(1, 5000):
        b = bucket_of(total)
        assert 2 ** (b - 1) <= total < 2**b
    assert bucket_of(3, 5) == bucket_of(8)  # element counts of all arrays, added


# -- entries --------------------------------------------------------------------------------


def test_entry_round_trips_through_json() -> None:
    e = entry()
    again = TuningEntry.from_dict(json.loads(json.dumps(e.as_dict())))
    assert again == e
    assert again.times == e.times
    assert again.key == (
        "matmul",
        "generic.x86-64-v3",
        "fp64",
        18,
        ("numpy.matmul", "scipy.matmul"),
    )


def test_entry_normalises_what_it_is_given() -> None:
    e = TuningEntry.from_dict(
        {
            **entry().as_dict(),
            "variants": ["scipy.matmul", "numpy.matmul"],
            "shapes": [[2, 3], [3]],
            "times": {"scipy.matmul": 1, "numpy.matmul": 2},
            "measured_at": 5,
        }
    )
    assert e.variants == ("numpy.matmul", "scipy.matmul")
    assert e.shapes == ((2, 3), (3,))
    assert e.times == {"scipy.matmul": 1.0, "numpy.matmul": 2.0}
    assert isinstance(e.measured_at, float)
    with pytest.raises(TypeError):
        e.times["numpy.matmul"] = 0.0  # type: ignore[index]
    hash(e)  # frozen and hashable (times is left out of the hash)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"op": ""}, "op must be a non-empty string"),
        ({"bucket": -1}, "bucket must be an integer >= 0"),
        ({"bucket": True}, "bucket must be an integer"),
        ({"bucket": 18.0}, "bucket must be an integer"),
        ({"variants": []}, "at least one variant"),
        ({"variants": "numpy.matmul"}, "variants must be a list"),
        ({"variants": ["a", "a"]}, "names a variant twice"),
        ({"winner": "torch.matmul"}, "is not among the variants"),
        ({"decided": "guessed"}, "decided must be one of"),
        ({"times": {"numpy.matmul": -1.0}}, "finite and >= 0"),
        ({"times": {"numpy.matmul": float("nan")}}, "finite and >= 0"),
        ({"times": {"numpy.matmul": "fast"}}, "a number of seconds"),
        ({"times": {"torch.matmul": 1.0}}, "not measured"),
        ({"times": [1.0]}, "times must map"),
        ({"times": {"numpy.matmul": 1e-5, "scipy.matmul": 1e-4}}, "is not the fastest"),
        ({"times": {"numpy.matmul": 1e-4}}, "has no time"),
        ({"shapes": [["a"]]}, "shape's extent"),
        ({"shapes": "2x2"}, "shapes must be a list"),
        ({"repeats": 0}, "repeats must be an integer >= 1"),
        ({"measured_at": "yesterday"}, "a number of seconds"),
        ({"surprise": 1}, "unknown ['surprise']"),
        ({"winner": None}, "winner must be a non-empty string"),
    ],
)
def test_a_malformed_entry_is_a_value_error(change: dict[str, Any], message: str) -> None:
    data = {**entry().as_dict(), **change}
    with pytest.raises(ValueError, match=re.escape(message)):
        TuningEntry.from_dict(data)


def test_an_entry_missing_a_key_or_not_an_object() -> None:
    data = entry().as_dict()
    del data["winner"]
    with pytest.raises(ValueError, match=r"missing \['winner'\]"):
        TuningEntry.from_dict(data)
    with pytest.raises(ValueError, match="must be a JSON object, not list"):
        TuningEntry.from_dict([1, 2])


def test_a_tie_keeps_the_priority_choice_whatever_the_times() -> None:
    e = entry(
        decided="tie", winner="numpy.matmul", times={"numpy.matmul": 2.0, "scipy.matmul": 1.0}
    )
    assert e.winner == "numpy.matmul"
    # A variant that could not be timed may still be the priority choice of a tie.
    assert entry(decided="tie", winner="numpy.matmul", times={"scipy.matmul": 1.0}).times


# -- records --------------------------------------------------------------------------------


def test_lookup_needs_the_same_variant_set() -> None:
    e = entry()
    found = TuningRecords([e])
    assert (
        found.lookup("matmul", "generic.x86-64-v3", "fp64", 18, ["scipy.matmul", "numpy.matmul"])
        is e
    )
    assert found.lookup("matmul", "generic.x86-64-v3", "fp64", 18, ("numpy.matmul",)) is None
    more = ("numpy.matmul", "scipy.matmul", "torch.matmul")
    assert found.lookup("matmul", "generic.x86-64-v3", "fp64", 18, more) is None
    assert found.lookup("matmul", "generic.x86-64-v3", "fp64", 19, e.variants) is None
    assert found.lookup("matmul", "generic.x86-64-v3", "fp32", 18, e.variants) is None
    assert found.lookup("matmul", "nvidia.h100-sxm", "fp64", 18, e.variants) is None


def test_records_hold_one_entry_per_key_sorted() -> None:
    first, second = entry(bucket=20), entry(bucket=20, winner="numpy.matmul")
    other = entry("fft.fft", variants=("numpy.fft", "scipy.fft"), winner="numpy.fft")
    found = TuningRecords([first, other, entry(bucket=3), second])
    assert len(found) == 3
    assert found.entries == (other, entry(bucket=3), second)  # a later entry replaces
    assert list(found) == list(found.entries)
    assert found.ops() == ("fft.fft", "matmul")
    assert found.for_op("matmul") == (entry(bucket=3), second)
    assert found.for_op("linalg.svd") == ()
    assert found == TuningRecords(found.entries)
    with pytest.raises(TypeError, match="TuningEntry"):
        TuningRecords([first.as_dict()])  # type: ignore[list-item]


def test_sizes_matter_when_the_winner_changes_with_the_bucket() -> None:
    small = entry(bucket=10, winner="numpy.matmul")
    large = entry(bucket=22, winner="scipy.matmul")
    assert TuningRecords([small, large]).sizes_matter("matmul")
    assert not TuningRecords([small, entry(bucket=22, winner="numpy.matmul")]).sizes_matter(
        "matmul"
    )
    # Different winners for different devices, dtypes or variant sets are not a size effect.
    fp32 = entry(bucket=22, dtype="fp32", winner="scipy.matmul")
    assert not TuningRecords([small, fp32]).sizes_matter("matmul")
    gpu = entry(bucket=22, device="nvidia.h100-sxm", winner="scipy.matmul")
    assert not TuningRecords([small, gpu]).sizes_matter("matmul")
    three = ("numpy.matmul", "scipy.matmul", "torch.matmul")
    assert not TuningRecords([small, entry(bucket=22, variants=three)]).sizes_matter("matmul")
    assert not TuningRecords([small, large]).sizes_matter("fft.fft")


def test_calibration_is_read_only() -> None:
    found = TuningRecords(calibration={"generic.x86-64-v3": {"gflops": 50.0, "sizes": [1, 2]}})
    device = found.calibration["generic.x86-64-v3"]
    assert device["gflops"] == 50.0 and device["sizes"] == (1, 2)
    with pytest.raises(TypeError):
        device["gflops"] = 1.0
    assert found.as_dict()["calibration"] == {
        "generic.x86-64-v3": {"gflops": 50.0, "sizes": [1, 2]}
    }


# -- the host fingerprint -------------------------------------------------------------------


def _fresh_plugins() -> None:
    # conftest forgets the plugin set between tests without announcing it: discovering it
    # again announces it, and with it the fingerprint is computed again.
    from prism_core.kernel.plugins import plugins

    plugins()


def test_the_host_fingerprint_covers_cpu_software_and_versions() -> None:
    _fresh_plugins()
    fp = host_fingerprint()
    for name in (
        "cpu.brand",
        "cpu.name",
        "cpu.flags",
        "cpu.machine",
        "cpu.count",
        "prism",
        "python",
        "library.numpy",
        "plugin.numpy",
    ):
        assert name in fp.components, name
    from prism_core.kernel.version import __version__

    assert fp.components["prism"] == __version__
    assert fp.components["cpu.count"] == str(os.cpu_count())
    import numpy

    assert fp.components["library.numpy"] == numpy.__version__
    assert len(fp.digest) == 16 and int(fp.digest, 16) >= 0
    assert host_fingerprint() is fp  # once per process
    assert Fingerprint.of(dict(fp.components)) == fp


def test_thread_variables_and_backend_settings_are_in_the_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A choice measured with other thread counts or backend settings is another host's."""
    from prism_core._builtin.numpy_backend import NumpyBackend
    from prism_core.kernel.plugins import reload_plugins

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    reload_plugins()
    before = host_fingerprint()
    assert "environment.OMP_NUM_THREADS" not in before.components
    assert "setting.numpy.precision" not in before.components
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr(NumpyBackend, "settings", lambda self: {"precision": "x64"}, raising=False)
    reload_plugins()  # plugins found again: the fingerprint is computed again
    after = host_fingerprint()
    assert after.components["environment.OMP_NUM_THREADS"] == "3"
    assert after.components["setting.numpy.precision"] == "x64"
    assert after.digest != before.digest
    monkeypatch.undo()
    reload_plugins()  # the next test's fingerprint is the host's again


def test_the_fingerprint_changes_with_every_component() -> None:
    _fresh_plugins()
    fp = host_fingerprint()
    for name in fp.components:
        changed = dict(fp.components)
        changed[name] += "+1"
        assert Fingerprint.of(changed).digest != fp.digest, name
    assert Fingerprint.of({**fp.components, "plugin.new": "x 1.0"}).digest != fp.digest
    assert Fingerprint.of(dict(reversed(list(fp.components.items())))).digest == fp.digest
    with pytest.raises(ValueError, match=r"use Fingerprint\.of"):
        Fingerprint(dict(fp.components), "0" * 16)
    assert HERE.differences(ELSEWHERE.components) == [
        "cpu.brand: 'Test CPU' here, 'Other CPU' there"
    ]


@pytest.mark.timeout(120)
def test_the_fingerprint_is_the_same_in_another_process_and_imports_no_framework() -> None:
    _fresh_plugins()
    code = textwrap.dedent(
        """
        import json, sys
        from prism_core._tuning.tuning_records import host_fingerprint
        fp = host_fingerprint()
        heavy = sorted(m for m in ("torch", "scipy", "cupy") if m in sys.modules)
        print(json.dumps({"digest": fp.digest, "heavy": heavy}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=100, check=True
    )
    found = json.loads(proc.stdout)
    assert found == {"digest": host_fingerprint().digest, "heavy": []}


GPU_PLUGIN = """\
from prism_core.extending import DetectedDevice, Detection, hookimpl

@hookimpl
def prism_detect_devices(library):
    return Detection((
        DetectedDevice("nvidia.h100-sxm", index=0, name="NVIDIA H100 80GB HBM3", uuid="GPU-aaaa",
                       driver="550.54.15"),
        DetectedDevice("nvidia.h100-sxm", index=1, name="NVIDIA H100 80GB HBM3", uuid="GPU-bbbb",
                       driver="550.54.15"),
    ))
"""


def test_the_fingerprint_names_each_gpu_and_its_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prism_core.kernel.host import present_devices

    from .conftest import put_distribution_on_path

    site = tmp_path / "site"
    site.mkdir()
    (site / "prism_test_tuning_gpus.py").write_text(GPU_PLUGIN, encoding="utf-8")
    put_distribution_on_path(
        monkeypatch, site, "prism-test-tuning-gpus", "2.5",
        "[prism.plugins]\ntuning-gpus = prism_test_tuning_gpus\n",
    )  # fmt: skip
    monkeypatch.setenv("PRISM_PLUGINS", "tuning-gpus")
    _fresh_plugins()
    gpus = [d for d in present_devices().devices if d.device_type == "nvidia.h100-sxm"]
    assert [(d.uuid, d.driver) for d in gpus] == [
        ("GPU-aaaa", "550.54.15"),
        ("GPU-bbbb", "550.54.15"),
    ]
    assert gpus[0].as_dict()["driver"] == "550.54.15"
    fp = host_fingerprint()
    assert fp.components["plugin.tuning-gpus"] == "prism-test-tuning-gpus 2.5"
    devices = sorted(v for k, v in fp.components.items() if k.startswith("device."))
    assert devices == [
        "nvidia.h100-sxm GPU-aaaa driver 550.54.15",
        "nvidia.h100-sxm GPU-bbbb driver 550.54.15",
    ]


def test_nvidia_smi_reports_the_driver() -> None:
    """The driver version comes from the nvidia-smi query detection already makes."""
    from prism_core.kernel.devices import default_library
    from prism_core.nvidia_smi import (
        NVIDIA_SMI_COMMAND,
        SmiGpu,
        detection_from_smi,
        parse_nvidia_smi,
    )

    assert NVIDIA_SMI_COMMAND[1].endswith(",driver_version")
    text = (
        "0, NVIDIA H100 80GB HBM3, GPU-aaaa, 81559, 550.54.15\n"
        "1, NVIDIA Acme, Rev B, GPU-bbbb, 1024, [N/A]\n"
        "2, NVIDIA L4, [N/A], [N/A], [N/A]\n"
        "3, NVIDIA L4, GPU-cccc, 23034\n"  # captured without the driver column: still read
    )
    gpus, unreadable = parse_nvidia_smi(text)
    assert unreadable == []
    assert gpus == [
        SmiGpu(0, "NVIDIA H100 80GB HBM3", "GPU-aaaa", 81559 << 20, "550.54.15"),
        SmiGpu(1, "NVIDIA Acme, Rev B", "GPU-bbbb", 1024 << 20, None),
        SmiGpu(2, "NVIDIA L4", None, None, None),
        SmiGpu(3, "NVIDIA L4", "GPU-cccc", 23034 << 20, None),
    ]
    found = detection_from_smi(text, default_library())
    assert found.devices[0].driver == "550.54.15"


# -- the store: writing, reading, merging ---------------------------------------------------


def test_record_writes_a_file_another_store_reads(tmp_path: Path) -> None:
    e = entry()
    written = store_in(tmp_path).record([e], {"generic.x86-64-v3": {"gflops": 50.0}})
    assert written.entries == (e,)
    store = store_in(tmp_path)
    assert store.path == tmp_path / f"{HERE.digest}.json"
    assert store.lock_path == tmp_path / f"{HERE.digest}.json.lock"
    loaded = store.load()
    assert loaded == written and loaded.entries == (e,)
    assert loaded.calibration["generic.x86-64-v3"]["gflops"] == 50.0
    assert loaded.fingerprint == HERE
    data = document(store.path)
    assert data["format"] == "prism-tuning" and data["version"] == 1
    assert data["fingerprint"] == dict(HERE.components) and data["digest"] == HERE.digest
    assert data["entries"] == [e.as_dict()]
    assert data["calibration"] == {"generic.x86-64-v3": {"gflops": 50.0}}
    assert store.problems == [] and store.bypassed == ""
    # Only the file and its lock: the temporary file was moved into place.
    assert sorted(p.name for p in tmp_path.iterdir()) == [store.path.name, store.lock_path.name]
    if os.name == "posix":
        assert store.path.stat().st_mode & 0o777 == 0o644


def test_record_merges_with_what_is_there(tmp_path: Path) -> None:
    one, two = store_in(tmp_path), store_in(tmp_path)  # as two processes would
    a, b = entry(bucket=10), entry(bucket=20)
    one.record([a], {"cpu": {"gflops": 1.0, "bandwidth": 2.0}})
    two.record([b], {"gpu": {"gflops": 3.0}})
    assert one.load().entries == (a, b)
    a2 = entry(bucket=10, winner="numpy.matmul")
    merged = one.record([a2], {"cpu": {"gflops": 5.0}})
    assert merged.entries == (a2, b)  # same key: replaced
    assert merged.calibration == {"cpu": {"gflops": 5.0}, "gpu": {"gflops": 3.0}}
    assert two.load() == merged
    three = ("numpy.matmul", "scipy.matmul", "torch.matmul")
    c = entry(bucket=10, variants=three)
    assert len(two.record([c])) == 3  # another variant set: another key


def test_record_announces_and_checks_its_arguments(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    before = _events.generation()
    store.record([entry()])
    assert _events.generation() > before
    with pytest.raises(TypeError, match="TuningEntry"):
        store.record([entry().as_dict()])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="to objects"):
        store.record(calibration={"cpu": 1.0})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="not plain JSON"):
        store.record(calibration={"cpu": {"peak": float("inf")}})
    assert len(store.load()) == 1


def test_clear_removes_this_hosts_records(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    other = store_in(tmp_path, ELSEWHERE)
    store.record([entry(bucket=1), entry(bucket=2)], {"cpu": {"gflops": 1.0}})
    other.record([entry()])
    before = _events.generation()
    assert store.clear() == 2
    assert _events.generation() > before
    assert len(store.load()) == 0 and store.load().calibration == {}
    assert not store.path.exists()
    assert len(other.load()) == 1  # another host's file is not this host's to clear
    assert store.clear() == 0
    assert store_in(tmp_path / "never-made").clear() == 0
    assert not (tmp_path / "never-made").exists()  # clearing makes nothing


# -- the process-wide records ---------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh PRISM_CACHE_DIR for the process-wide records."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("PRISM_CACHE_DIR", str(directory))
    _fresh_plugins()
    tuning.reload()
    yield directory
    monkeypatch.undo()
    tuning.reload()


@pytest.mark.timeout(120)
def test_records_are_loaded_once_and_again_after_a_record(cache: Path) -> None:
    first = tuning.records()
    assert len(first) == 0
    assert tuning.records() is first
    store = tuning.default_store()
    assert store.directory == cache / "tuning"
    assert store.path == cache / "tuning" / f"{host_fingerprint().digest}.json"
    store.record([entry()])
    second = tuning.records()
    assert second is not first and second.entries == (entry(),)
    assert tuning.records() is second
    # Another process's record is seen after reload().
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_tuning import entry
        from prism_core._tuning import tuning_records as tuning
        tuning.default_store().record([entry("fft.fft", variants=("a", "b"), winner="a")])
        """
    )
    subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)], check=True, timeout=100
    )
    assert tuning.records() is second
    assert tuning.reload().ops() == ("fft.fft", "matmul")
    assert tuning.default_store().clear() == 2
    assert len(tuning.records()) == 0


def test_records_follow_the_cache_directory(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tuning.default_store().record([entry()])
    assert len(tuning.records()) == 1
    monkeypatch.setenv("PRISM_CACHE_DIR", str(cache.parent / "elsewhere"))
    assert len(tuning.records()) == 0
    monkeypatch.setenv("PRISM_CACHE_DIR", str(cache))
    assert len(tuning.records()) == 1


def test_records_never_raise_and_warn_once(cache: Path) -> None:
    store = tuning.default_store()
    store.path.mkdir(parents=True)  # where the file should be, a directory: unreadable
    with pytest.warns(TuningCacheWarning, match="cannot be read") as caught:
        assert len(tuning.reload()) == 0
    assert len(caught) == 1
    assert str(store.path) in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller, not into Prism
    assert len(tuning.reload()) == 0  # the same problem is not warned twice
    assert len(tuning.default_store().problems) == 1


# -- faults ---------------------------------------------------------------------------------


def _valid_file(directory: Path) -> Path:
    store = store_in(directory)
    store.record([entry(bucket=5), entry(bucket=6)])
    return store.path


CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "not JSON": lambda data: b"{this is not json",
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "binary": lambda data: b"\xff\xfe\x00\x01garbage",
    "a JSON list": lambda data: b"[]",
    "another format": lambda data: data.replace(b'"prism-tuning"', b'"fftw-wisdom"'),
    "a newer version": lambda data: data.replace(b'"version": 1', b'"version": 2'),
    "entries not a list": lambda data: json.dumps(
        {**json.loads(data), "entries": {"matmul": 1}}
    ).encode(),
    "calibration not an object": lambda data: json.dumps(
        {**json.loads(data), "calibration": []}
    ).encode(),
    "fingerprint missing": lambda data: json.dumps(
        {k: v for k, v in json.loads(data).items() if k != "fingerprint"}
    ).encode(),
    "deeply nested": lambda data: b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("damage", sorted(CORRUPTIONS))
def test_a_damaged_file_is_moved_aside_and_rebuilt(tmp_path: Path, damage: str) -> None:
    path = _valid_file(tmp_path)
    bad = CORRUPTIONS[damage](path.read_bytes())
    path.write_bytes(bad)
    store = store_in(tmp_path)
    with pytest.warns(TuningCacheWarning, match="is damaged") as caught:
        found = store.load()
    assert len(found) == 0  # nothing of a damaged file is used
    message = str(caught[0].message)
    assert str(path) in message and "moved aside" in message and "starts empty" in message
    assert store.problems == [message]
    aside = list(tmp_path.glob(f"{path.name}.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == bad  # kept for inspection
    assert not path.exists()
    # The next record works, and the file is whole again.
    assert store.record([entry()]).entries == (entry(),)
    assert document(path)["entries"] == [entry().as_dict()]
    assert store_in(tmp_path).load().entries == (entry(),)


def test_a_damaged_file_found_while_recording_is_moved_aside(tmp_path: Path) -> None:
    path = _valid_file(tmp_path)
    path.write_bytes(b"{")
    store = store_in(tmp_path)
    with pytest.warns(TuningCacheWarning, match="is damaged"):
        assert store.record([entry()]).entries == (entry(),)
    assert len(list(tmp_path.glob("*.corrupt-*"))) == 1
    assert document(path)["entries"] == [entry().as_dict()]


def test_a_malformed_entry_is_dropped_alone(tmp_path: Path) -> None:
    path = _valid_file(tmp_path)
    data = document(path)
    data["entries"][0]["winner"] = "nobody.matmul"
    data["entries"].append("not an entry")
    data["calibration"]["cpu"] = [1, 2]
    path.write_text(json.dumps(data), encoding="utf-8")
    store = store_in(tmp_path)
    with pytest.warns(TuningCacheWarning, match="3 malformed record") as caught:
        found = store.load()
    assert "entry 0: winner 'nobody.matmul' is not among the variants" in str(caught[0].message)
    assert found.entries == (entry(bucket=6),)
    assert found.calibration == {}
    store.record([entry()])  # rewrites the file without them
    assert [e["bucket"] for e in document(path)["entries"]] == [6, 18]
    assert document(path)["calibration"] == {}


def test_a_foreign_file_is_never_used(tmp_path: Path) -> None:
    """A file copied from another host to this host's name: its fingerprint says so."""
    theirs = store_in(tmp_path / "there", ELSEWHERE)
    theirs.record([entry(winner="numpy.matmul")])
    store = store_in(tmp_path / "here")
    store.path.parent.mkdir()
    shutil.copy(theirs.path, store.path)
    with pytest.warns(TuningCacheWarning, match="is not this host's") as caught:
        found = store.load()
    assert len(found) == 0
    message = str(caught[0].message)
    assert "written for another host: cpu.brand: 'Test CPU' here, 'Other CPU' there" in message
    assert "never used" in message
    aside = list(store.path.parent.glob(f"{store.path.name}.foreign-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == theirs.path.read_bytes()
    assert store.record([entry()]).entries == (entry(),)


def test_a_file_whose_digest_is_not_its_hosts_is_never_used(tmp_path: Path) -> None:
    path = _valid_file(tmp_path)
    data = document(path)
    data["digest"] = ELSEWHERE.digest
    path.write_text(json.dumps(data), encoding="utf-8")
    store = store_in(tmp_path)
    with pytest.warns(TuningCacheWarning, match=f"its digest '{ELSEWHERE.digest}' is not"):
        assert len(store.load()) == 0
    assert len(list(tmp_path.glob("*.foreign-*"))) == 1


def test_an_unreadable_file_is_bypassed_not_overwritten(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    store.path.mkdir()  # a directory where the file should be
    (store.path / "keep").write_text("x")
    with pytest.warns(TuningCacheWarning, match="cannot be read"):
        assert len(store.load()) == 0
    assert store.bypassed
    found = store.record([entry()])  # kept in memory; what is there is not written over
    assert found.entries == (entry(),)
    assert (store.path / "keep").read_text() == "x"
    assert store.load().entries == (entry(),)


def test_a_directory_that_cannot_be_created(tmp_path: Path) -> None:
    """A cache path through a regular file: not even root can create it."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    store = store_in(blocker / "tuning")
    with pytest.warns(TuningCacheWarning, match="cannot be read"):
        assert len(store.load()) == 0
    with pytest.warns(TuningCacheWarning, match="cannot be written") as caught:
        found = store.record([entry()], {"cpu": {"gflops": 1.0}})
    assert "kept in memory" in str(caught[0].message)
    assert found.entries == (entry(),)  # bypassed: this process keeps its records
    assert store.load().entries == (entry(),)
    assert store.load().calibration == {"cpu": {"gflops": 1.0}}
    assert store.bypassed  # why: the last problem met (the file cannot be read either)
    assert len(store.problems) == 2
    assert blocker.read_text() == "not a directory"
    assert store.clear() == 1  # the records in memory; on disk there is nothing to clear
    assert len(store.load()) == 0


def _as_unprivileged_user(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work()`` run by a user without privileges; its result (plain data), or the test fails.

    Not root: here, in this process (permissions apply).  Root ignores permission bits, so
    for root a forked child drops to uid/gid 65534 first.  (``subprocess.run(user=...)`` would
    need the interpreter to be reachable by that user, which it is not where Python lives under
    a private home directory, as it does here: the forked child needs nothing new.)
    """
    if os.name != "posix" or not hasattr(os, "fork"):
        pytest.skip("permissions of directories are POSIX modes here; no fork() to drop them")
    if os.geteuid() != 0:
        return work()
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads, 3.12+
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        payload: dict[str, Any]
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(UNPRIVILEGED)
            os.setuid(UNPRIVILEGED)
            payload = {"result": work()}
        except PermissionError as exc:
            payload = {"skip": f"cannot drop privileges to uid {UNPRIVILEGED}: {exc}"}
        except BaseException:
            payload = {"error": traceback.format_exc()}
        try:
            os.write(write_end, json.dumps(payload).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    answer = json.loads(b"".join(chunks) or b'{"error": "the child said nothing"}')
    if "skip" in answer:
        pytest.skip(answer["skip"])
    assert "error" not in answer, answer["error"]
    result: dict[str, Any] = answer["result"]
    return result


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory every user can reach (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="prism-tuning-"))
    path.chmod(0o755)
    yield path
    for sub in (path, *path.rglob("*")):
        if sub.is_dir():
            sub.chmod(0o755)
    shutil.rmtree(path)


@pytest.mark.timeout(60)
def test_a_read_only_directory_is_bypassed(shared_tmp: Path) -> None:
    directory = shared_tmp / "tuning"
    path = _valid_file(directory)
    before = path.read_bytes()
    directory.chmod(0o555)

    def write() -> dict[str, Any]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            store = store_in(directory, lock_timeout=5)
            loaded = len(store.load())
            recorded = store.record([entry()])
            again = store.load()
        return {
            "loaded": loaded,
            "recorded": [e.bucket for e in recorded],
            "again": [e.bucket for e in again],
            "bypassed": store.bypassed,
            "problems": store.problems,
            "warnings": [(w.category.__name__, str(w.message)) for w in caught],
        }

    seen = _as_unprivileged_user(write)
    assert seen["loaded"] == 2  # a read-only cache is still read
    assert seen["recorded"] == [5, 6, 18]  # and the new record is kept in memory
    assert seen["again"] == [5, 6, 18]
    assert "cannot be written" in seen["bypassed"] and "kept in memory" in seen["bypassed"]
    assert seen["warnings"] == [["TuningCacheWarning", seen["bypassed"]]]
    assert seen["problems"] == [seen["bypassed"]]
    assert path.read_bytes() == before  # untouched
    assert not list(directory.glob("*.tmp"))


@pytest.mark.timeout(60)
def test_a_lock_held_too_long_is_reported_not_fatal(tmp_path: Path) -> None:
    store = store_in(tmp_path, lock_timeout=0.2)
    store.record([entry(bucket=1)])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import filelock, sys; lock = filelock.FileLock(sys.argv[1]); lock.acquire(); "
            "print('held', flush=True); sys.stdin.read()",
            str(store.lock_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # The holder lets go only when its stdin closes (below): returning at all is giving up.
        with pytest.warns(TuningCacheWarning, match="held the tuning cache's lock") as caught:
            found = store.record([entry(bucket=2)])
        assert "more than 0.2 s" in str(caught[0].message)
        assert [e.bucket for e in found] == [1, 2]  # the file's, and this one in memory
        assert [e["bucket"] for e in document(store.path)["entries"]] == [1]
    finally:
        holder.communicate(timeout=30)  # closes its stdin: it lets go, and ends
    # Once the lock is free, the next record writes what was kept in memory too.
    store.record([entry(bucket=3)])
    assert [e["bucket"] for e in document(store.path)["entries"]] == [1, 2, 3]
    assert store.bypassed == ""


WRITER = """\
import sys, time, warnings
from pathlib import Path
from prism_core._tuning.tuning_records import (
    Fingerprint, TuningCacheWarning, TuningEntry, TuningStore
)

warnings.simplefilter("error", TuningCacheWarning)
directory, worker, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
start = float(sys.argv[4])
here = Fingerprint.of({"cpu.brand": "Test CPU", "prism": "0", "python": "CPython 3"})
store = TuningStore(directory, here, lock_timeout=60)
while time.time() < start:
    time.sleep(0.001)
for i in range(count):
    e = TuningEntry(
        op=f"op{worker}", device="cpu", dtype="fp64", bucket=i, variants=("a", "b"),
        times={"a": 1.0, "b": 2.0}, winner="a", decided="measured", shapes=((i,),),
        repeats=1, measured_at=time.time(),
    )
    store.record([e], {f"device{worker}": {"last": i}})
print("ok")
"""


@pytest.mark.timeout(120)
def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    workers, count = 4, 15
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    directory = tmp_path / "tuning"
    start = time.time() + 2.0  # every process starts recording at once
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(directory), str(w), str(count), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=100)
        assert proc.returncode == 0 and out.strip() == "ok", err
    path = directory / f"{HERE.digest}.json"
    data = document(path)  # valid JSON
    assert len(data["entries"]) == workers * count
    found = store_in(directory).load()
    assert {(e.op, e.bucket) for e in found} == {
        (f"op{w}", i) for w in range(workers) for i in range(count)
    }
    assert found.calibration == {f"device{w}": {"last": count - 1} for w in range(workers)}
    leftovers = [
        p.name for p in directory.iterdir() if p.name not in (path.name, path.name + ".lock")
    ]
    assert leftovers == []


def test_no_cache_reads_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _valid_file(tmp_path / "old")
    monkeypatch.setenv("PRISM_NO_CACHE", "1")
    assert len(store_in(tmp_path / "old").load()) == 0  # not read
    store = store_in(tmp_path / "new")
    assert not store.enabled
    assert store.bypassed.startswith("PRISM_NO_CACHE=1")
    found = store.record([entry()])
    assert found.entries == (entry(),) and store.load().entries == (entry(),)
    assert not (tmp_path / "new").exists()  # not written
    assert store.problems == []
    assert store.summary()["exists"] is False
    assert store.clear() == 1
    assert len(store.load()) == 0


def test_summary(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    store.record([entry()])
    summary = store.summary()
    assert summary == {
        "path": str(store.path),
        "exists": True,
        "enabled": True,
        "bypassed": "",
        "fingerprint": HERE.as_dict(),
        "entries": 1,
        "ops": ["matmul"],
        "problems": [],
    }
    json.dumps(summary)
