"""FASTA and FASTQ files, read as streams of records.

A reader goes through its file one line at a time and holds one record at a time, never the
file: a search through a genome's worth of reads needs the memory of the longest record, not
of the file.  ``.gz``, ``.bz2`` and ``.xz`` files are decompressed as they are read (by their
extension).

Malformed input is an error that says where, as a person fixing the file needs it: the file,
the line, the record (its name, or the line its header is on) and what is wrong
(:class:`SequenceFileError`, a ``ValueError``)::

    reads.fq: record 'read7' at line 31: the quality line has 98 characters, the sequence 100

What the readers accept:

* FASTA: a header line ``>name description`` then any number of sequence lines (none: an empty
  sequence); blank lines anywhere; sequence lines of letters, ``*`` (a stop) and ``-``/``.``
  (gaps, which alignment refuses later with the record named).  Whitespace at the ends of a
  line is dropped.  Lines may end in ``\\n``, ``\\r\\n`` or ``\\r`` (old Mac OS), as in
  Biopython.
* FASTQ: four lines per record -- ``@name description``, the sequence, ``+`` (optionally
  followed by the name again), the quality (as many characters as the sequence, from ``!`` to
  ``~``); blank lines between records.  Multi-line FASTQ (sequences wrapped over lines) is not
  accepted: it is rare, and ambiguous where a quality line starts with ``@``.

A UTF-8 byte-order mark at the start of a file is skipped; a compressed file whose name does not
say so, and a UTF-16 one, are errors that say what the file looks like.

Letters are not checked against an alphabet here: encoding does that
(:func:`prism_genomics.encode`), naming the record and the position.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from prism_core import PrismError
from prism_core.backend_kit import display_path

__all__ = [
    "FASTA_SUFFIXES",
    "FASTQ_SUFFIXES",
    "Record",
    "SequenceFileError",
    "SequenceReader",
    "read_fasta",
    "read_fastq",
    "read_sequences",
]

FASTA_SUFFIXES = (".fa", ".fasta", ".fna", ".ffn", ".faa", ".frn", ".fas", ".mpfa", ".seq")
FASTQ_SUFFIXES = (".fq", ".fastq")
_COMPRESSED = (".gz", ".bz2", ".xz")
_SEQUENCE_LINE = re.compile(rb"[A-Za-z*\-.]*")
#: What sequence lines may hold (deleted by ``bytes.translate``: what remains is wrong).
_LETTERS = bytes(range(ord("A"), ord("Z") + 1)) + bytes(range(ord("a"), ord("z") + 1)) + b"*-."
#: What quality lines may hold: '!' to '~'.
_QUALITY = bytes(range(33, 127))
#: How compressed files start: the compression, and the extension that has it decompressed.
_COMPRESSION = (
    (re.compile(rb"\x1f\x8b"), "gzip", ".gz"),
    (re.compile(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)"), "bzip2", ".bz2"),
    (re.compile(rb"\xfd7zXZ\x00"), "xz", ".xz"),
)
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class SequenceFileError(PrismError, ValueError):
    """A FASTA or FASTQ file that cannot be read: malformed (``line`` and ``record`` say
    where), missing, or not a sequence file."""

    __module__ = "prism_genomics"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        record: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.record = record


@dataclass(frozen=True)
class Record:
    """One record: ``name`` (the header's first word), ``description`` (the rest of the
    header), ``sequence`` (the letters as written, case kept), ``quality`` (FASTQ only, else
    ``None``) and ``line``, the line its header is on (1-based)."""

    name: str
    description: str
    sequence: str
    quality: str | None = None
    line: int = 0

    __module__ = "prism_genomics"

    def __len__(self) -> int:
        return len(self.sequence)


def _format_of(path: str) -> str | None:
    name = path.lower()
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    if name.endswith(FASTQ_SUFFIXES):
        return "fastq"
    if name.endswith(FASTA_SUFFIXES):
        return "fasta"
    return None


#: How much of a binary file's first line is read before its line ends are known.
_PEEK = 1 << 16


def _universal_lines(head: bytes, file: Any) -> Iterator[bytes]:
    """The lines of a binary file whose lines end in ``\\r`` (old Mac OS), ``\\n`` or
    ``\\r\\n`` alike, as Python's universal newlines read text, read in blocks (never the
    whole file); ``head`` is what was read of it already."""
    pending = head
    while True:
        block = file.read(_PEEK)
        lines = (pending + block).splitlines(keepends=True)
        if not block:
            yield from lines
            return
        # The last piece may be a line cut by the block (or a "\r" whose "\n" follows).
        pending = lines.pop() if lines else b""
        yield from lines


def _open(path: str) -> Any:
    """A binary file object for ``path``, decompressing by its extension."""
    lower = path.lower()
    if lower.endswith(".gz"):
        import gzip

        return gzip.open(path, "rb")
    if lower.endswith(".bz2"):
        import bz2

        return bz2.open(path, "rb")
    if lower.endswith(".xz"):
        import lzma

        return lzma.open(path, "rb")
    return open(path, "rb")  # closed by the reader


class SequenceReader(Iterable[Record]):
    """The records of a FASTA or FASTQ file, read one line at a time (iterate over it once).

    ``bytes_read`` counts the (decompressed) bytes consumed so far and ``size`` is the size of
    an uncompressed file (``None`` otherwise): together, a progress bar.  Use it in a ``with``
    block, or iterate to the end, to close the file.

    :param source: a path, or a file object open for reading (text or binary).
    :param format: ``"fasta"``, ``"fastq"`` or ``None``: from the extension (``.fa``,
        ``.fasta``, ``.fq``, ``.fastq``, ... before an optional ``.gz``/``.bz2``/``.xz``), else
        from the first character of the file (``>`` or ``@``).
    """

    __module__ = "prism_genomics"

    def __init__(self, source: str | os.PathLike[str] | IO[Any], format: str | None = None) -> None:
        if format not in (None, "fasta", "fastq"):
            raise ValueError(f"format must be 'fasta', 'fastq' or None (guess), got {format!r}")
        self.size: int | None = None
        self.bytes_read = 0
        self._owned = False
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            self.path = path
            self.display = display_path(path)
            if os.path.isdir(path):
                raise SequenceFileError(f"{self.display}: is a directory, not a sequence file")
            try:
                self._file: IO[Any] = _open(path)
            except FileNotFoundError:
                raise SequenceFileError(f"{self.display}: no such file", path=path) from None
            except OSError as exc:
                raise SequenceFileError(
                    f"{self.display}: cannot be read: {exc.strerror or exc}", path=path
                ) from None
            self._owned = True
            if not path.lower().endswith(_COMPRESSED):
                self.size = os.path.getsize(path)
            self.format = format or _format_of(path)
        else:
            if not hasattr(source, "readline"):
                raise TypeError(
                    "source must be a path or a file object open for reading, got "
                    f"{type(source).__name__}"
                )
            self._file = source
            name = getattr(source, "name", None)
            self.path = name if isinstance(name, str) else "<stream>"
            self.display = display_path(self.path) if isinstance(name, str) else "<stream>"
            self.format = format
        self._records: Iterator[Record] | None = None

    # -- lines -------------------------------------------------------------------------------
    def _raw_lines(self) -> Iterator[bytes]:
        """The file's lines as bytes, line ends kept: a binary file is iterated as it is (the
        fast path), a text file's lines are encoded (a non-ASCII character is a located
        error)."""
        file = self._file
        first = file.readline(_PEEK)  # bounded: a file of bare CRs has no "\n" to stop at
        if not isinstance(first, str):
            first = self._start(first)
            if b"\r" in first.removesuffix(b"\n").removesuffix(b"\r"):
                return _universal_lines(first, file)  # old Mac OS line ends
            if len(first) == _PEEK and not first.endswith(b"\n"):
                first += file.readline()  # a first line longer than the peek, whole
            return itertools.chain((first,), file) if first else iter(())
        return self._encoded(first.removeprefix("\ufeff"), file)

    def _start(self, first: bytes) -> bytes:
        """The first line without a UTF-8 byte-order mark (Windows editors write one; it is no
        part of the text), or an error saying what a compressed or UTF-16 file looks like (read
        as ASCII text, the error could only name its first byte that is not ASCII)."""
        if first.startswith(_UTF8_BOM):
            self.bytes_read += len(_UTF8_BOM)
            return first[len(_UTF8_BOM) :]
        if first[:2] in _UTF16_BOMS:
            raise self._error(
                1,
                None,
                f"this looks UTF-16 text (it starts with the byte-order mark {first[:2].hex(' ')}"
                "), not ASCII: save it as ASCII (or UTF-8) text",
            )
        for magic, kind, suffix in _COMPRESSION:
            match = magic.match(first)
            if match is None:
                continue
            looks = f"this looks {kind}-compressed (it starts with bytes {match[0].hex(' ')})"
            if self.path.lower().endswith(_COMPRESSED):
                what = f"{looks} once decompressed: it was compressed twice; decompress it once"
            elif self._owned:
                what = (
                    f"{looks}, not like ASCII text: name it {self.display}{suffix} to have it "
                    "decompressed as it is read"
                )
            else:
                what = f"{looks}, not like ASCII text: decompress it before reading it"
            raise self._error(1, None, what)
        return first

    def _encoded(self, first: str, file: Any) -> Iterator[bytes]:
        for number, raw in enumerate(itertools.chain((first,), file), start=1):
            try:
                yield raw.encode("ascii")
            except UnicodeEncodeError as exc:
                raise self._error(
                    number,
                    None,
                    f"{raw[exc.start]!r} at column {exc.start + 1} is not ASCII (sequence files "
                    "are ASCII text)",
                ) from None

    def _error(self, line: int, record: str | None, what: str) -> SequenceFileError:
        where = f"record {record!r} at line {line}" if record else f"line {line}"
        return SequenceFileError(
            f"{self.display}: {where}: {what}", path=self.path, line=line, record=record
        )

    def _unreadable(self, line: int, exc: BaseException) -> SequenceFileError:
        # A truncated or corrupt compressed file, or a failing disk.
        return SequenceFileError(
            f"{self.display}: cannot be read after line {line}: {exc}", path=self.path, line=line
        )

    def _text(self, number: int, line: bytes, record: str | None) -> str:
        try:
            return line.decode("ascii")
        except UnicodeDecodeError as exc:
            raise self._error(
                number,
                record,
                f"byte 0x{line[exc.start]:02x} at column {exc.start + 1} is not ASCII (sequence "
                "files are ASCII text)",
            ) from None

    def _letters(self, number: int, line: bytes, record: str) -> SequenceFileError | None:
        """The error for the first character of ``line`` that is not a sequence letter."""
        if not line.translate(None, _LETTERS):
            return None
        match = _SEQUENCE_LINE.match(line)
        assert match is not None
        bad = line[match.end()]
        shown = repr(chr(bad)) if 32 <= bad < 127 else f"byte 0x{bad:02x}"
        return self._error(
            number,
            record,
            f"{shown} at column {match.end() + 1} is not a sequence letter (letters, '*', '-' "
            "and '.')",
        )

    # -- records ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Record]:
        if self._records is None:
            self._records = self._read()
        return self._records

    def __enter__(self) -> SequenceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self._file.close()

    def __del__(self) -> None:
        # A reader dropped before its end (``next(iter(reader))``) closes the file it opened,
        # as the file object itself would, but without a ResourceWarning.
        if getattr(self, "_owned", False):
            self._file.close()

    def _read(self) -> Iterator[Record]:
        try:
            try:
                lines = self._raw_lines()
            except (OSError, EOFError) as exc:
                raise self._unreadable(0, exc) from None
            fmt = self.format
            first: bytes | None = None
            number = 0
            if fmt is None:  # guess from the first line that is not blank
                try:
                    for raw in lines:
                        number += 1
                        self.bytes_read += len(raw)
                        if raw.strip():
                            first = raw
                            break
                except (OSError, EOFError) as exc:
                    raise self._unreadable(number, exc) from None
                if first is None:
                    return
                start = first.lstrip()[:1]
                if start == b">":
                    fmt = "fasta"
                elif start == b"@":
                    fmt = "fastq"
                else:
                    shown = self._text(number, first.strip()[:20], None)
                    raise self._error(
                        number,
                        None,
                        f"{shown!r} does not start a FASTA ('>') or FASTQ ('@') record",
                    )
                self.format = fmt
                lines = itertools.chain((first,), lines)
                self.bytes_read -= len(first)  # counted again as the parser reads it
                number -= 1
            if fmt == "fasta":
                yield from self._fasta(lines, number)
            else:
                yield from self._fastq(lines, number)
        finally:
            self.close()  # on an error or an early stop too, not only at the end

    def _header(self, number: int, line: bytes, marker: str) -> tuple[str, str]:
        words = self._text(number, line, None)[1:].split(None, 1)
        name = words[0] if words else ""
        description = words[1].strip() if len(words) > 1 else ""
        if not name:
            raise self._error(
                number,
                None,
                f"a header without a name ({marker!r} must be followed by the record's name)",
            )
        return name, description

    def _fasta(self, lines: Iterator[bytes], number: int) -> Iterator[Record]:
        name: str | None = None
        description = ""
        header_line = 0
        chunks: list[bytes] = []
        where: list[int] = []  # the line of each chunk, for errors
        size = 0

        def record() -> Record:
            assert name is not None
            sequence = b"".join(chunks)
            if sequence.translate(None, _LETTERS):  # something that is not a letter: where?
                for chunk, line in zip(chunks, where, strict=True):
                    error = self._letters(line, chunk, name)
                    if error is not None:
                        raise error
            return Record(name, description, sequence.decode(), None, header_line)

        try:
            for raw in lines:
                number += 1
                size += len(raw)
                if raw[:1] == b">":
                    if name is not None:
                        self.bytes_read += size - len(raw)
                        size = len(raw)
                        yield record()
                    name, description = self._header(number, raw.strip(), ">")
                    header_line, chunks, where = number, [], []
                    continue
                line = raw.strip()
                if not line:
                    continue
                if name is None:
                    if line[:1] == b">":
                        name, description = self._header(number, line, ">")
                        header_line = number
                        continue
                    shown = self._text(number, line[:20], None)
                    raise self._error(
                        number,
                        None,
                        f"{shown!r} comes before the first header; a FASTA file starts with a "
                        "'>name' line",
                    )
                chunks.append(line)
                where.append(number)
        except (OSError, EOFError) as exc:
            raise self._unreadable(number, exc) from None
        self.bytes_read += size
        if name is not None:
            yield record()

    def _fastq(self, lines: Iterator[bytes], number: int) -> Iterator[Record]:
        it = iter(lines)
        parts: list[bytes] = []
        try:
            for raw in it:
                number += 1
                self.bytes_read += len(raw)
                header = raw.strip()
                if not header:
                    continue
                header_line = number
                if header[:1] != b"@":
                    shown = self._text(number, header[:20], None)
                    raise self._error(
                        number,
                        None,
                        f"{shown!r} where a FASTQ record's '@name' line should be (a record is "
                        "four lines: @name, sequence, +, quality; wrapped sequences are not "
                        "supported)",
                    )
                name, description = self._header(number, header, "@")
                parts.clear()
                for raw_part in itertools.islice(it, 3):
                    number += 1
                    self.bytes_read += len(raw_part)
                    parts.append(raw_part.strip())
                if len(parts) < 3:
                    what = ("the sequence line", "the '+' line", "the quality line")[len(parts)]
                    raise self._error(
                        header_line, name, f"the file ends before {what} (a record is four lines)"
                    )
                seq, plus, qual = parts
                error = self._letters(header_line + 1, seq, name)
                if error is not None:
                    raise error
                if plus[:1] != b"+":
                    raise self._error(
                        header_line + 2,
                        name,
                        f"{self._text(header_line + 2, plus[:20], name)!r} where the '+' line "
                        "should be (wrapped FASTQ sequences are not supported)",
                    )
                if len(plus) > 1:
                    repeated = self._text(header_line + 2, plus[1:], name).strip()
                    if repeated and repeated != name:
                        raise self._error(
                            header_line + 2,
                            name,
                            f"the '+' line names {repeated!r}, not the record's {name!r}",
                        )
                if len(qual) != len(seq):
                    raise self._error(
                        header_line + 3,
                        name,
                        f"the quality line has {len(qual)} characters, the sequence {len(seq)}",
                    )
                if qual.translate(None, _QUALITY):
                    odd = next(i for i, c in enumerate(qual) if not 33 <= c <= 126)
                    shown = repr(chr(qual[odd])) if qual[odd] < 128 else f"byte 0x{qual[odd]:02x}"
                    raise self._error(
                        header_line + 3,
                        name,
                        f"{shown} at column {odd + 1} is not a quality character ('!' to '~')",
                    )
                yield Record(name, description, seq.decode(), qual.decode(), header_line)
        except (OSError, EOFError) as exc:
            raise self._unreadable(number, exc) from None


def read_sequences(
    source: str | os.PathLike[str] | IO[Any], format: str | None = None
) -> SequenceReader:
    """The records of a FASTA or FASTQ file (``format`` from the extension or the first
    character when ``None``), streamed: see :class:`SequenceReader`."""
    return SequenceReader(source, format)


def read_fasta(source: str | os.PathLike[str] | IO[Any]) -> SequenceReader:
    """The records of a FASTA file, streamed."""
    return SequenceReader(source, "fasta")


def read_fastq(source: str | os.PathLike[str] | IO[Any]) -> SequenceReader:
    """The records of a FASTQ file, streamed."""
    return SequenceReader(source, "fastq")


def is_sequence_path(value: Any) -> bool:
    """Whether ``value`` names a sequence file: a ``Path``, or a ``str`` with a FASTA/FASTQ
    extension (a bare string of letters is a sequence, not a file name)."""
    if isinstance(value, Path):
        return True
    return isinstance(value, str) and _format_of(value) is not None
