"""The limit on `extends` chains: the length of a lineage, whatever the files are called."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from prism_core.hardware import DeviceLibrary, SearchEntry
from prism_core.kernel.description.library import MAX_INHERITANCE_DEPTH

CHAIN = 200
#: More than Python's default recursion limit.
ABOVE = 1500

#: File names for link ``i`` of the chain (``lab.c0`` is the root, ``lab.c{i}`` extends
#: ``lab.c{i-1}``), sorting in three different orders relative to the chain.
NAMINGS: dict[str, Callable[[int], str]] = {
    "c0..c199": lambda i: f"c{i}.yaml",  # c0, c1, c10, c100, c101, ...: neither order
    "root first": lambda i: f"{i:03d}.yaml",
    "root last": lambda i: f"{CHAIN - 1 - i:03d}.yaml",
}


def write_chain(directory: Path, name: Callable[[int], str]) -> None:
    directory.mkdir()
    for i in range(CHAIN):
        text = f"device_type: lab.c{i}\nkind: cpu\n"
        if i:
            text += f"extends: lab.c{i - 1}\n"
        (directory / name(i)).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("naming", list(NAMINGS))
def test_lineage_limit_does_not_depend_on_file_names(tmp_path: Path, naming: str) -> None:
    write_chain(tmp_path / "chain", NAMINGS[naming])
    lib = DeviceLibrary([SearchEntry(tmp_path / "chain", "user")], use_cache=False)
    loaded = {d.device_type for d in lib}
    # A lineage of 64 levels (the device and 63 ancestors) is allowed; 65 is not.
    assert loaded == {f"lab.c{i}" for i in range(MAX_INHERITANCE_DEPTH)}
    assert max(len(lib.get(t).lineage) for t in loaded) == MAX_INHERITANCE_DEPTH
    problems = {p.file.rsplit("/", 1)[-1]: p for p in lib.problems}
    too_deep = {NAMINGS[naming](i) for i in range(MAX_INHERITANCE_DEPTH, CHAIN)}
    assert set(problems) == too_deep
    assert all((p.line, p.column, p.json_path) == (3, 1, "$.extends") for p in problems.values())
    first = problems[NAMINGS[naming](MAX_INHERITANCE_DEPTH)].message
    assert first == (
        "the `extends` chain of lab.c64 is 65 levels deep (lab.c64 -> lab.c63 -> lab.c62 -> ... "
        "-> lab.c2 -> lab.c1 -> lab.c0); at most 64 levels are allowed: extend a device type "
        "nearer the root"
    )
    last = problems[NAMINGS[naming](CHAIN - 1)].message
    assert "of lab.c199 is 200 levels deep (lab.c199 -> lab.c198 -> " in last


def test_lineage_depth_is_the_longest_chain_through_any_parent(tmp_path: Path) -> None:
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    # A long branch (lab.l0 .. lab.l62, 63 levels) and a short one meet in lab.join.
    for i in range(MAX_INHERITANCE_DEPTH - 1):
        extends = f"extends: lab.l{i - 1}\n" if i else ""
        (lib_dir / f"l{i}.yaml").write_text(f"device_type: lab.l{i}\n{extends}", encoding="utf-8")
    (lib_dir / "short.yaml").write_text("device_type: lab.short\n", encoding="utf-8")
    (lib_dir / "join.yaml").write_text(
        "device_type: lab.join\nextends: [lab.short, lab.l62]\n", encoding="utf-8"
    )
    (lib_dir / "over.yaml").write_text(
        "device_type: lab.over\nextends: [lab.short, lab.join]\n", encoding="utf-8"
    )
    lib = DeviceLibrary([SearchEntry(lib_dir, "user")], use_cache=False)
    assert "lab.join" in lib  # 64 levels through lab.l62
    assert "lab.over" not in lib
    [problem] = lib.problems
    assert problem.file.endswith("over.yaml")
    assert "of lab.over is 65 levels deep (lab.over -> lab.join -> lab.l62 -> " in problem.message


@pytest.mark.parametrize("length", [2, 500])
def test_long_chains_above_a_cycle_end_in_problems_not_recursion_errors(
    tmp_path: Path, length: int
) -> None:
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    # lab.k0 .. lab.k{length-1} form a cycle; ABOVE types extend it, one above the other.
    for i in range(length):
        (lib_dir / f"k{i}.yaml").write_text(
            f"device_type: lab.k{i}\nextends: lab.k{(i + 1) % length}\n", encoding="utf-8"
        )
    for i in range(ABOVE):
        parent = f"lab.a{i - 1}" if i else "lab.k0"
        (lib_dir / f"a{i}.yaml").write_text(
            f"device_type: lab.a{i}\nextends: {parent}\n", encoding="utf-8"
        )
    lib = DeviceLibrary([SearchEntry(lib_dir, "user")], use_cache=False)
    assert len(lib) == 0
    assert {p.file.rsplit("/", 1)[-1] for p in lib.problems} == {
        *(f"k{i}.yaml" for i in range(length)),
        *(f"a{i}.yaml" for i in range(ABOVE)),
    }
    if length == 2:
        assert any(
            "inheritance cycle: lab.k0 -> lab.k1 -> lab.k0" in p.message for p in lib.problems
        )
