"""The device library: the device files of a search path, loaded, checked together and
resolved.

A device type defined in a later entry of the search path replaces the one of an earlier entry
(recorded in ``DeviceDescription.overrides``); defined twice *within one entry*, it is an error
naming both files.  Each description inherits from the parents its file `extends`, by the rules
of docs/device-files.md; what only the resolved descriptions can tell (a missing parent or
predecessor, a cycle, partitions that do not fit their package) is reported at the key that
says it.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from prism_core.kernel.config import cache_dir, cache_enabled
from prism_core.kernel.description.cache import ValidationCache
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.device_files import (
    DeviceFile,
    SearchEntry,
    default_search_path,
    files_of,
    read_device_file,
    scan_directory,
)
from prism_core.kernel.errors import (
    DeviceFileError,
    PrismWarning,
    Problem,
    UnknownDeviceError,
    debug,
    did_you_mean,
    display_path,
)
from prism_core.kernel.events import DEVICES, announce
from prism_core.kernel.public import home

__all__ = [
    "DeviceLibrary", "FileReport", "default_library", "devices", "forget_default_library",
    "get_device", "load_device_file", "reload_devices", "validate_paths",
]  # fmt: skip


#: Keys a description does not inherit from its parents.
NOT_INHERITED = frozenset(
    {"format_version", "device_type", "name", "description", "abstract", "extends"}
    | {"succeeds", "dropped_features"}
)
#: Lists merged entry by entry, keyed by the given field; a child's entry replaces its parent's.
KEYED_LISTS = MappingProxyType(
    {"features": "name", "memory_hierarchy": "level", "numeric_formats": "name"}
)
#: Mappings replaced whole (their fields only make sense together).
ATOMIC = frozenset({"cloud_price", "host_link", "device_link"})
#: Longest chain of `extends` accepted.
MAX_INHERITANCE_DEPTH = 64
#: An amount of a description that partitions share (compute units, bytes, TFLOP/s).
_Amount = Callable[[DeviceDescription], float | None]


def _merge(
    target: dict[str, Any],
    provenance: dict[str, str],
    data: Mapping[str, Any],
    source: str,
    source_provenance: Mapping[str, str],
    *,
    skip: frozenset[str] = frozenset(),
    prefix: str = "",
) -> None:
    """Merge ``data`` over ``target`` by the documented rules, recording where values came from.

    Values are shared, not copied: documents are never mutated once validated (descriptions
    expose copies), and copying dominated the warm start (benchmarks/bench_startup.py).
    """
    for key, value in data.items():
        if key in skip:
            continue
        where = prefix + key
        if not prefix and key in KEYED_LISTS:
            name_key = KEYED_LISTS[key]
            merged = list(target.get(key, ()))
            index = {item[name_key]: i for i, item in enumerate(merged)}
            for item in value:
                name = item[name_key]
                if name in index:
                    merged[index[name]] = item
                else:
                    index[name] = len(merged)
                    merged.append(item)
                at = f"{key}[{name}]"
                provenance[at] = source_provenance.get(at, source)
            target[key] = merged
        elif isinstance(value, dict) and not (not prefix and key in ATOMIC):
            sub = target.get(key)
            sub = dict(sub) if isinstance(sub, dict) else {}
            _merge(sub, provenance, value, source, source_provenance, prefix=where + ".")
            target[key] = sub
        else:
            replaced = target.get(key)
            target[key] = value
            provenance[where] = source_provenance.get(where, source)
            if isinstance(replaced, dict):
                # A replaced mapping's finer provenance no longer applies.  (Only a mapping has
                # any: the items of lists have none of their own, so no scan for a replaced list.)
                for stale in [k for k in provenance if k.startswith((f"{where}.", f"{where}["))]:
                    del provenance[stale]


def _canonical_order(data: Mapping[str, object]) -> dict[str, object]:
    """Keys in the order the schema lists them, so that output reads the same for every device."""
    from prism_core.kernel.description.schema import device_schema

    order = device_schema()["properties"]
    return {k: data[k] for k in order if k in data}


@home("prism_core.hardware")
class DeviceLibrary:
    """The device descriptions found on a search path, validated and resolved.

    Loading is lenient: a file with problems is skipped and its problems are kept in
    :attr:`problems`; everything else loads.  Use :meth:`raise_for_problems` for strictness.
    """

    def __init__(
        self,
        entries: Sequence[SearchEntry] | None = None,
        *,
        use_cache: bool | None = None,
        exclude: set[str] | None = None,
    ) -> None:
        self._exclude = exclude or set()
        self.entries: tuple[SearchEntry, ...] = tuple(
            default_search_path() if entries is None else entries
        )
        self.problems: list[Problem] = []
        #: The problems of each search-path origin (``"plugin:cuda"``, ``"user"``, ...).
        self.problems_by_origin: dict[str, list[Problem]] = {}
        self.files: dict[str, DeviceFile] = {}
        self._overridden: dict[str, list[Path]] = {}
        self._resolved: dict[str, DeviceDescription] = {}
        self.cache: ValidationCache | None = None
        if use_cache or (use_cache is None and cache_enabled()):
            from prism_core.kernel.description.schema import device_schema_bytes

            try:
                directory: Path | None = cache_dir()
            except Exception as exc:  # platformdirs missing or a broken environment
                debug("validation cache disabled: %s", exc)
                directory = None
            self.cache = ValidationCache(directory, device_schema_bytes())
        for entry in self.entries:
            before = len(self.problems)
            self._load_entry(entry)
            if len(self.problems) > before:
                self.problems_by_origin.setdefault(entry.origin, []).extend(self.problems[before:])
        if self.cache is not None:
            self.cache.save()
        failed: set[str] = set()
        self._depths = self._lineage_depths()
        for dtype in sorted(self.files):
            self._resolve(dtype, (), failed)
        self._check_references()

    def _load_entry(self, entry: SearchEntry) -> None:
        paths, problems = files_of(entry)
        self.problems.extend(problems)
        in_entry: dict[str, Path] = {}
        for path in paths:
            if entry.files is None and self._exclude and os.path.realpath(path) in self._exclude:
                continue  # named again in a later entry of explicit files
            dev, problems = read_device_file(path, entry, self.cache)
            self.problems.extend(problems)
            if dev is None:
                continue
            dtype = dev.device_type
            if dtype in in_entry:
                self._problem_at(
                    dev,
                    ("device_type",),
                    f"device type {dtype!r} is already defined in {display_path(in_entry[dtype])}"
                    "; a device type may be defined once per search-path entry: rename one of "
                    "them or remove the copy",
                )
                continue
            in_entry[dtype] = path
            previous = self.files.get(dtype)
            if previous is not None:
                debug("%s overrides %s for %s", path, previous.path, dtype)
                self._overridden.setdefault(dtype, []).append(previous.path)
            self.files[dtype] = dev

    def _check_references(self) -> None:
        """Report each device type ``succeeds`` and ``partitions`` name that cannot be used, and
        what a resolved description says that cannot be (:meth:`_impossible`); drop those
        descriptions and their children, as for a missing parent."""
        bad: dict[str, None] = {}
        for dtype in sorted(self._resolved):
            dev = self.files[dtype]
            for path, message in self._impossible(dtype):
                self._problem_at(dev, path, message, key=False)
                bad[dtype] = None
            succeeds = dev.data.get("succeeds")
            if succeeds is not None and succeeds not in self.files:
                hint = did_you_mean(succeeds, self.files)
                message = f"predecessor {succeeds!r} is not defined on the search path{hint}"
                self._problem_at(dev, ("succeeds",), message)
                bad[dtype] = None
            for i, entry in enumerate(dev.data.get("partitions", ())):
                # A format-1 entry names one device_type; a format-2 one a list of parts.
                parts = [(p["device_type"], p["count"]) for p in entry.get("parts") or [entry]]
                fine = True
                for j, (target, count) in enumerate(parts):
                    why = self._partition_problem(dtype, target, count, alone=len(parts) == 1)
                    if why is not None:
                        where = ("parts", j) if "parts" in entry else ()
                        self._problem_at(dev, ("partitions", i, *where, "device_type"), why)
                        bad[dtype] = None
                        fine = False
                for why in self._partition_totals(dtype, entry["mode"], parts) if fine else ():
                    at = "parts" if "parts" in entry else "count"
                    self._problem_at(dev, ("partitions", i, at), why, key=at == "parts")
                    bad[dtype] = None
        if not bad:
            return
        for dtype in sorted(self._resolved):
            desc = self._resolved[dtype]
            broken = [t for t in desc.lineage if t in bad]
            if broken and dtype not in bad:
                parent = next(p for p in desc.parents if broken[0] in self._resolved[p].lineage)
                self._problem_at(
                    self.files[dtype],
                    ("extends",),
                    f"parent device type {parent!r} could not be loaded (see its problems)",
                )
        for dtype in [t for t, d in self._resolved.items() if bad.keys() & set(d.lineage)]:
            del self._resolved[dtype]

    def _partition_problem(self, dtype: str, target: str, count: int, *, alone: bool) -> str | None:
        if target == dtype:
            if count == 1 and alone:
                return None
            return (
                "a description can be its own partition only with count: 1 and no other part "
                "(a mode in which software sees the whole package as one device)"
            )
        desc = self._resolved.get(target)
        if desc is None:
            if target in self.files:
                return f"partition device type {target!r} could not be loaded (see its problems)"
            hint = did_you_mean(target, self.files)
            return f"partition device type {target!r} is not defined on the search path{hint}"
        if desc.abstract:
            return (
                f"partition device type {target!r} is abstract; name the description of one "
                "device software sees"
            )
        if any(t != target for p in desc.partitions for t in p.device_types):
            return (
                f"partition device type {target!r} is partitioned itself; name the description "
                "of one device software sees"
            )
        return None

    def _partition_totals(
        self, dtype: str, mode: str, devices: Sequence[tuple[str, int]]
    ) -> Iterator[str]:
        """Why the devices of partition mode ``mode`` (whose device types resolve) cannot all be
        in the package ``dtype``: more compute units, global memory (where each device has its
        own, scope device) or peak throughput in all than the package has."""
        from prism_core.kernel.quantities import bytes_text

        package = self._resolved[dtype]
        parts = [(self._resolved[t], count) for t, count in devices]
        if any(desc is package for desc, _ in parts):
            return
        number = "{:g}".format
        # What the devices share: its name, its amount on a description, how it is written.
        shared: list[tuple[str, _Amount, Callable[[float], str]]] = [
            ("compute units", lambda d: d.compute_units, number)
        ]
        levels = [desc.memory_level("global") for desc, _ in parts]
        if all(level is not None and level.scope == "device" for level in levels):
            shared.append(
                ("of global memory", lambda d: d.memory_bytes, lambda n: bytes_text(int(n)))
            )
        for name in package.peak_tflops:
            peak = functools.partial(DeviceDescription.peak, dtype=name)
            shared.append((f"{name} TFLOP/s", peak, number))
        shown = ", ".join(f"{count} x {desc.device_type}" for desc, count in parts)
        for what, amount, text in shared:
            have = amount(package)
            each = [(amount(desc) or 0, count) for desc, count in parts]
            total = sum(a * count for a, count in each)
            if have is None or total <= have * 1.001:  # peaks: a datasheet's rounding
                continue
            fix = f"give parts that add up to at most {text(have)}"
            if len(parts) == 1:
                fix = f"give a count of at most {int(have // each[0][0])}"
            share = "it" if what.startswith("of") else "them"
            yield (
                f"mode {mode!r} shows {shown}: {text(total)} {what} in all, more than "
                f"the package's {text(have)} (the devices software sees share {share}); {fix}"
            )

    def _impossible(self, dtype: str) -> Iterator[tuple[tuple[str | int, ...], str]]:
        """What a resolved description says that its device cannot be, where its file and its
        parents' each say a part of it (a file that says it all alone was refused when read):
        a unit's rate above the peak of its data type.  Yields (path in the file, why)."""
        desc = self._resolved[dtype]
        if "throughput" in desc.data:
            from prism_core.kernel.description.throughput import rates_above_peak

            for i, rate_type, message in rates_above_peak(desc.data):
                given = [desc.provenance[k] for k in ("throughput", f"peak_tflops.{rate_type}")]
                if given[0] == dtype:
                    yield ("throughput", i, "tflops"), message
                elif given[1] == dtype:
                    yield ("peak_tflops", rate_type), message
                elif given[0] != given[1]:  # from two parents, neither wrong alone
                    yield ("extends",), message

    def _problem_at(
        self, dev: DeviceFile, path: tuple[str | int, ...], message: str, *, key: bool = True
    ) -> None:
        line, col = dev.locate(*path, key=key)
        where = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
        self.problems.append(Problem(display_path(dev.path), line, col, where, message))

    def _lineage_depths(self) -> dict[str, tuple[int, str | None]]:
        """Each device type's lineage depth: the levels of its longest `extends` chain (itself
        is one) and the parent that chain goes through (``None`` at a root).

        Computed on the graph of `extends`, iteratively, before anything is resolved, so the
        limit does not depend on the order in which files are resolved (their names).  A missing
        parent counts as no parent (it is reported on its own); types on or below a cycle are
        left out (the cycle is reported when resolving).
        """
        depths: dict[str, tuple[int, str | None]] = {}
        undefined: set[str] = set()
        for root in self.files:
            if root in depths or root in undefined:
                continue
            stack = [(root, iter(self.files[root].parents))]
            on_stack = {root}
            while stack:
                dtype, parents = stack[-1]
                parent = next(parents, None)
                if parent is not None:
                    if parent in on_stack or parent in undefined:  # a cycle, or below one
                        undefined.update(on_stack)
                    elif parent in self.files and parent not in depths:
                        stack.append((parent, iter(self.files[parent].parents)))
                        on_stack.add(parent)
                    continue
                stack.pop()
                on_stack.discard(dtype)
                if dtype in undefined:
                    continue
                levels, via = 1, None
                for p in self.files[dtype].parents:
                    if p in undefined:
                        undefined.add(dtype)
                        break
                    if p in depths and depths[p][0] + 1 > levels:
                        levels, via = depths[p][0] + 1, p
                else:
                    depths[dtype] = (levels, via)
        return depths

    def _too_deep(self, dtype: str, chain: tuple[str, ...]) -> str | None:
        """The problem of a lineage over the limit, naming its longest chain; else ``None``.

        ``chain`` is the path of the resolution that reached ``dtype``.  It matters only for
        types on or below a cycle, which have no depth: there it bounds the recursion (such a
        type fails anyway, and the cycle is reported where it closes).
        """
        if dtype not in self._depths:
            if len(chain) < MAX_INHERITANCE_DEPTH:
                return None
            path = [*chain, dtype]
            levels = f"more than {MAX_INHERITANCE_DEPTH}"
        else:
            depth = self._depths[dtype][0]
            if depth <= MAX_INHERITANCE_DEPTH:
                return None
            path = []
            step: str | None = dtype
            while step is not None:
                path.append(step)
                step = self._depths[step][1]
            levels = str(depth)
        shown = path if len(path) <= 7 else [*path[:3], "...", *path[-3:]]
        return (
            f"the `extends` chain of {path[0]} is {levels} levels deep ({' -> '.join(shown)}); "
            f"at most {MAX_INHERITANCE_DEPTH} levels are allowed: extend a device type nearer "
            "the root"
        )

    def _resolve(
        self, dtype: str, chain: tuple[str, ...], failed: set[str]
    ) -> DeviceDescription | None:
        if dtype in self._resolved:
            return self._resolved[dtype]
        if dtype in failed:
            return None
        dev = self.files[dtype]
        if dtype in chain:
            # Every member of the cycle is invalid, so each is told, from its own point of view.
            members = chain[chain.index(dtype) :]
            for i, member in enumerate(members):
                cycle = " -> ".join((*members[i:], *members[:i], member))
                self._problem_at(
                    self.files[member],
                    ("extends",),
                    f"inheritance cycle: {cycle}; remove one of these `extends`",
                )
            failed.update(members)
            return None
        too_deep = self._too_deep(dtype, chain)
        if too_deep is not None:
            self._problem_at(dev, ("extends",), too_deep)
            failed.add(dtype)
            return None
        parents: list[DeviceDescription] = []
        for parent in dev.parents:
            if parent not in self.files:
                hint = did_you_mean(parent, self.files)
                self._problem_at(
                    dev,
                    ("extends",),
                    f"parent device type {parent!r} is not defined on the search path{hint}",
                )
                failed.add(dtype)
                return None
            resolved = self._resolve(parent, (*chain, dtype), failed)
            if resolved is None:
                if dtype not in failed:
                    self._problem_at(
                        dev,
                        ("extends",),
                        f"parent device type {parent!r} could not be loaded (see its problems)",
                    )
                failed.add(dtype)
                return None
            parents.append(resolved)
        if dtype in failed:  # part of a cycle reported deeper down
            return None
        data: dict[str, Any] = {}
        provenance: dict[str, str] = {}
        for p in reversed(parents):  # the first parent wins, so it is merged last
            _merge(data, provenance, p.data, p.device_type, p.provenance, skip=NOT_INHERITED)
        _merge(data, provenance, dev.data, dtype, {})
        data = _canonical_order(data)
        lineage = [dtype]
        for p in parents:
            lineage.extend(t for t in p.lineage if t not in lineage)
        desc = DeviceDescription(
            device_type=dtype,
            data=data,
            path=dev.path,
            origin=dev.entry.origin,
            parents=dev.parents,
            lineage=tuple(lineage),
            provenance=provenance,
            overrides=tuple(self._overridden.get(dtype, ())),
        )
        self._resolved[dtype] = desc
        return desc

    # -- queries --------------------------------------------------------------------------
    def get(self, device_type: str) -> DeviceDescription:
        """The description of ``device_type``; :class:`UnknownDeviceError` names close matches."""
        if not isinstance(device_type, str):
            raise TypeError(
                "device_type must be a device type string such as 'nvidia.h100-sxm'; got "
                f"{device_type!r} ({type(device_type).__name__})"
            )
        try:
            return self._resolved[device_type]
        except KeyError:
            raise UnknownDeviceError(device_type, sorted(self._resolved)) from None

    def __contains__(self, device_type: object) -> bool:
        return device_type in self._resolved

    def __iter__(self) -> Iterator[DeviceDescription]:
        return iter(self.list(include_abstract=True))

    def __len__(self) -> int:
        return len(self._resolved)

    def list(
        self, *, include_abstract: bool = False, kind: str | None = None, vendor: str | None = None
    ) -> list[DeviceDescription]:
        """Descriptions sorted by device type; families (``abstract``) only when asked for."""
        return [
            d
            for _, d in sorted(self._resolved.items())
            if (include_abstract or not d.abstract)
            and kind in (None, d.kind)
            and vendor in (None, d.vendor)
        ]

    def raise_for_problems(self) -> None:
        if self.problems:
            raise DeviceFileError(self.problems)


_default: DeviceLibrary | None = None
_lock = threading.Lock()


def default_library() -> DeviceLibrary:
    """The library on the default search path, loaded on first use and then kept."""
    global _default
    lib = _default
    if lib is None:
        with _lock:
            if _default is None:
                _default = DeviceLibrary()
                if _default.problems:
                    n = len(_default.problems)
                    warnings.warn(
                        f"{n} problem{'s' if n != 1 else ''} in the device library; the affected "
                        "files were skipped:\n"
                        + "\n".join(f"  {p}" for p in sorted(_default.problems)),
                        PrismWarning,
                        stacklevel=3,
                    )
            lib = _default
    return lib


def forget_default_library() -> None:
    """Drop the loaded library without announcing it: the next use loads it again (a plugin
    set being replaced, which announces its own change; a test's clean slate)."""
    global _default
    with _lock:
        _default = None


def reload_devices() -> DeviceLibrary:
    """Forget the loaded library (after changing ``PRISM_HARDWARE_PATH``) and load it again."""
    forget_default_library()
    announce(DEVICES)  # the layers above drop what they derived from the old library
    return default_library()


def devices(
    *, include_abstract: bool = False, kind: str | None = None, vendor: str | None = None
) -> list[DeviceDescription]:
    """All device descriptions on the search path, sorted by device type; families such as
    ``nvidia.hopper`` only where ``include_abstract`` is true."""
    return default_library().list(include_abstract=include_abstract, kind=kind, vendor=vendor)


def get_device(device_type: str) -> DeviceDescription:
    """The resolved description of ``device_type`` (``"nvidia.h100-sxm"``)."""
    return default_library().get(device_type)


@home("prism_core.hardware")
@dataclass
class FileReport:
    """What validation found for one file."""

    path: Path
    device_type: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        return {
            "file": display_path(self.path),
            "device_type": self.device_type,
            "valid": self.valid,
            "problems": [p.as_dict() for p in sorted(self.problems)],
        }


def _expand(paths: Iterable[str | Path]) -> tuple[list[Path], list[Problem]]:
    files: list[Path] = []
    problems: list[Problem] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw)
        try:
            st = os.stat(p)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR) and not os.path.islink(p):
                missing.append(str(raw))
            else:  # a link loop, a broken link, no permission: that file's problem
                files.append(p)
            continue
        if stat.S_ISDIR(st.st_mode):
            found, trouble = scan_directory(p, st)
            files.extend(found)
            problems.extend(trouble)
        else:  # a FIFO or a device is refused when read, as that file's problem
            files.append(p)
    if missing:
        raise FileNotFoundError("no such file or directory: " + ", ".join(repr(m) for m in missing))
    # The same file named twice (a.yaml ./a.yaml, or inside a named directory) is checked once.
    unique: dict[str, Path] = {}
    for f in files:
        unique.setdefault(os.path.realpath(f), f)
    return list(unique.values()), problems


def _check_files(
    paths: Iterable[str | Path], *, use_cache: bool | None
) -> tuple[DeviceLibrary, list[FileReport]]:
    files, unsearchable = _expand(paths)
    given = SearchEntry(Path("."), "command line", files=tuple(files))
    lib = DeviceLibrary(
        [*default_search_path(), given],
        use_cache=use_cache,
        exclude={os.path.realpath(f) for f in files},
    )
    reports = {display_path(f): FileReport(f) for f in files}
    for problem in lib.problems:
        if problem.file in reports:
            reports[problem.file].problems.append(problem)
    # What could not be searched under a named directory is reported under its own name.
    for problem in unsearchable:
        reports.setdefault(problem.file, FileReport(Path(problem.file))).problems.append(problem)
    for dev in lib.files.values():
        rep = reports.get(display_path(dev.path))
        if rep is not None and dev.entry is given:
            rep.device_type = dev.device_type
    return lib, list(reports.values())


def validate_paths(
    paths: Iterable[str | Path], *, use_cache: bool | None = None
) -> list[FileReport]:
    """Validate device files (and the files under directories), resolving their ``extends``.

    The given files are checked together, as one search-path entry on top of the default search
    path: their parents may be shipped or user devices, and a device type defined twice among
    them is an error.  Paths that do not exist raise :class:`FileNotFoundError`.
    """
    return _check_files(paths, use_cache=use_cache)[1]


def load_device_file(path: str | Path) -> DeviceDescription:
    """Load one device file strictly, its ``extends`` resolved against the default search
    path: raise :class:`DeviceFileError` listing all its problems."""
    lib, reports = _check_files([path], use_cache=None)
    if not reports:
        raise FileNotFoundError(f"no device file (*.yaml, *.yml) under {str(path)!r}")
    if len(reports) > 1:
        raise IsADirectoryError(f"{str(path)!r} holds {len(reports)} device files; load one file")
    report = reports[0]
    if not report.valid or report.device_type is None:
        raise DeviceFileError(report.problems)
    return lib.get(report.device_type)
