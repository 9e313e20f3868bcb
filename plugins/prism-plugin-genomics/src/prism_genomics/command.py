"""``prism genomics align QUERY TARGETS``: every query against every target, the best hits.

A ``prism`` command of a plugin: the entry point ``genomics`` of the group ``prism.commands``
names :func:`add_command`, which ``prism`` calls with its subcommands when it builds its parser
(docs/writing-a-plugin.md, "Adding a `prism` command"); this module imports nothing heavy at
import (the parser is built on every ``prism`` invocation that reaches plugin commands).
Queries are read first (they are aligned with every group of targets); targets are streamed
through :func:`prism_genomics.search`, with a progress bar on a terminal.

Errors are one line each and never a traceback: an option that cannot be is a usage error
(:class:`CommandLineError`, written as ``prism genomics: error: ...``, exit 2); a malformed
file, an unknown letter or a failed alignment is a ``PrismError`` naming the file, the record
and where, which ``prism`` writes as one line (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any, TextIO

__all__ = ["CommandLineError", "add_arguments", "add_command", "main", "run"]

#: The exit status of a usage error, as for every ``prism`` command.
EXIT_USAGE = 2

SCORINGS = ("dna", "dnafull", "blosum62")


class CommandLineError(Exception):
    """An option value that cannot be (the command line turns it into exit status 2)."""


def add_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``prism genomics``: the entry point ``genomics`` of ``prism.commands`` (adds the command
    to ``prism``'s subcommands; :func:`main` runs it)."""
    parser = subparsers.add_parser(
        "genomics",
        help="sequence alignment: prism genomics align QUERY.fa TARGETS.fa (docs/genomics.md)",
        description="Genomics on Prism's dispatch (prism-plugin-genomics). `prism genomics "
        "align QUERY TARGETS` aligns every query with every target (Smith-Waterman, affine "
        "gaps) on the best variant for this hardware and lists the best hits.",
    )
    add_arguments(parser)
    parser.set_defaults(func=main)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``prism genomics align``; the exit status (2, with the message on ``err``, for an
    option that cannot be)."""
    try:
        return run(args, out, err)
    except CommandLineError as exc:
        err.write(f"prism genomics: error: {exc}\n")
        return EXIT_USAGE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``genomics`` command's subcommands, on ``parser`` (theirs are of its class, so that a
    usage error exits as ``prism``'s own do)."""
    sub = parser.add_subparsers(
        dest="genomics_command", metavar="COMMAND", parser_class=type(parser)
    )
    sub.required = True
    p = sub.add_parser(
        "align",
        help="align every query with every target (Smith-Waterman) and list the best hits",
        description="Align every sequence of QUERY with every sequence of TARGETS (FASTA or "
        "FASTQ files, .gz/.bz2/.xz read as they are decompressed; TARGETS is streamed, never "
        "held whole) by local alignment with affine gaps, on the best variant for this "
        "hardware, and list each query's best hits. Positions are 0-based and inclusive. Exit "
        "0 on success, 1 when a file is malformed (the message names the file, line and "
        "record) or a sequence has letters outside the alphabet, 2 on usage errors.",
    )
    p.add_argument("query", metavar="QUERY", help="FASTA/FASTQ file of query sequences")
    p.add_argument("targets", metavar="TARGETS", help="FASTA/FASTQ file of target sequences")
    p.add_argument(
        "--scoring",
        default="dna",
        choices=SCORINGS,
        help="dna: match 2, mismatch -3, gaps 5/2 (default); dnafull: NUC.4.4, gaps 10/1; "
        "blosum62: proteins, gaps 11/1",
    )
    p.add_argument(
        "--gap-open",
        type=int,
        metavar="N",
        help="gap-open penalty (a gap of L costs open + (L-1) extend)",
    )
    p.add_argument("--gap-extend", type=int, metavar="N", help="gap-extend penalty")
    p.add_argument("--top", type=int, default=5, metavar="K", help="hits per query (default 5)")
    p.add_argument(
        "--traceback", action="store_true", help="also the starts, CIGAR and aligned rows"
    )
    p.add_argument(
        "--unknown",
        metavar="LETTER",
        help="align letters outside the alphabet as LETTER (N for DNA, X for proteins) instead "
        "of failing",
    )
    p.add_argument("--backend", help="run on this backend only (e.g. numpy, parasail)")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")


def _check(args: argparse.Namespace) -> Any:
    from prism_genomics.scoring import get_scoring

    for path, what in ((args.query, "QUERY"), (args.targets, "TARGETS")):
        if not os.path.exists(path):
            raise CommandLineError(f"{what}: {path}: no such file")
        if os.path.isdir(path):
            raise CommandLineError(f"{what}: {path}: is a directory, not a FASTA/FASTQ file")
    if args.top < 1:
        raise CommandLineError(f"--top must be >= 1, got {args.top}")
    try:
        scheme = get_scoring(args.scoring, args.gap_open, args.gap_extend)
    except (TypeError, ValueError) as exc:
        raise CommandLineError(str(exc)) from None
    if args.unknown is not None:
        try:
            scheme.alphabet.code(args.unknown)
        except ValueError as exc:
            raise CommandLineError(f"--unknown: {exc}") from None
    return scheme


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``prism genomics align``; returns the exit status."""
    import contextlib

    from prism_core import PrismError, use_backend
    from prism_core.backend_kit import display_path
    from prism_genomics._align import search
    from prism_genomics.io import read_sequences
    from prism_genomics.scoring import SequenceError

    scheme = _check(args)
    targets = read_sequences(args.targets)
    progress = _Progress(err, targets, enabled=not args.json)
    counted = {"targets": 0}

    def on_group(done: int) -> None:
        counted["targets"] = done
        progress.update(done)

    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(targets)
            if args.backend is not None:
                try:
                    stack.enter_context(use_backend(args.backend))
                except PrismError as exc:  # unknown or unavailable backend
                    raise CommandLineError(str(exc)) from None
            # Held (search holds the queries anyway): a query without hits is named by its record.
            queries = list(read_sequences(args.query))
            try:
                results = search(
                    queries,
                    targets,
                    scoring=scheme,
                    top=args.top,
                    traceback=args.traceback,
                    unknown=args.unknown,
                    on_group=on_group,
                )
            except SequenceError as exc:
                # The letter and the record are named; add the file they came from.
                source = args.targets if str(exc).startswith("targets") else args.query
                # The way out, as this command spells it.
                message = re.sub(r"pass unknown='(.)'", r"pass --unknown \1", str(exc))
                raise SequenceError(
                    f"{display_path(source)}: {message}",
                    letter=exc.letter,
                    position=exc.position,
                    alphabet=exc.alphabet,
                    record=exc.record,
                ) from None
    finally:
        progress.close()
    rows = [hit for hits in results for hit in hits]
    if args.json:
        document = {
            "query_file": display_path(args.query),
            "target_file": display_path(args.targets),
            "targets": counted["targets"],
            "scoring": {
                "name": scheme.name,
                "alphabet": scheme.alphabet.letters,
                "gap_open": scheme.gap_open,
                "gap_extend": scheme.gap_extend,
            },
            "top": args.top,
            "queries": [
                {"query": query.name, "hits": [h.as_dict() for h in hits]}
                for query, hits in zip(queries, results, strict=True)
            ],
        }
        json.dump(document, out, indent=2)
        out.write("\n")
        return 0
    header = ["QUERY", "TARGET", "SCORE", "QUERY END", "TARGET END"]
    if args.traceback:
        header = ["QUERY", "TARGET", "SCORE", "QUERY", "TARGET", "CIGAR"]
    table = [header]
    for hit in rows:
        r = hit.result
        if args.traceback:
            table.append(
                [
                    hit.query,
                    hit.target or "-",
                    str(r.score),
                    f"{r.query_start}-{r.query_end}",
                    f"{r.target_start}-{r.target_end}",
                    r.cigar or "",
                ]
            )
        else:
            table.append(
                [hit.query, hit.target or "-", str(r.score), str(r.query_end), str(r.target_end)]
            )
    if rows:
        _write_table(table, out, right={2, 3, 4})
    no_hits = sum(1 for hits in results if not hits)
    out.write(
        f"{len(results)} quer{'ies' if len(results) != 1 else 'y'} x {counted['targets']} "
        f"target{'s' if counted['targets'] != 1 else ''}, scoring {scheme.name} (gap open "
        f"{scheme.gap_open}, extend {scheme.gap_extend}); positions 0-based, inclusive"
        + (f"; {no_hits} quer{'ies' if no_hits != 1 else 'y'} without a hit" if no_hits else "")
        + "\n"
    )
    return 0


def _write_table(rows: list[list[str]], out: TextIO, right: set[int]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        out.write("  ".join(cells).rstrip() + "\n")


class _Progress:
    """A tqdm bar over the bytes of the targets file read so far (over the targets aligned when
    the size is unknown: a compressed file), on a terminal only."""

    def __init__(self, err: TextIO, reader: Any, *, enabled: bool) -> None:
        self.reader = reader
        self.bar: Any = None
        if enabled and err.isatty():
            from tqdm import tqdm  # type: ignore[import-untyped]

            if reader.size is not None:
                self.bar = tqdm(
                    total=reader.size,
                    unit="B",
                    unit_scale=True,
                    file=err,
                    leave=False,
                    desc="targets",
                    dynamic_ncols=True,
                )
            else:
                self.bar = tqdm(unit=" targets", file=err, leave=False, dynamic_ncols=True)

    def update(self, targets_done: int) -> None:
        bar = self.bar
        if bar is None:
            return
        bar.n = self.reader.bytes_read if self.reader.size is not None else targets_done
        bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
