"""FASTA and FASTQ readers (prism_genomics/io.py): real files in tmp_path, compressed ones,
file objects, every malformed case located by file, line and record, and a large file read
with memory bounded by one record (tracemalloc)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tracemalloc
from pathlib import Path
from typing import Any

import prism_genomics as genomics
import pytest
from prism_genomics import Record, SequenceFileError, read_fasta, read_fastq, read_sequences

FASTA = """\
>chr1 the first one
ACGTAC
gtNNAC

>chr2
ACGT*
>empty record with no letters
>chr3\tafter a tab
A-C.G
"""

FASTQ = """\
@read1 lane 3
ACGTAC
+
IIIIII

@read2
gg
+read2
#!
"""


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def test_fasta_records(tmp_path: Path) -> None:
    records = list(read_fasta(write(tmp_path / "a.fa", FASTA)))
    assert records == [
        Record("chr1", "the first one", "ACGTACgtNNAC", None, 1),
        Record("chr2", "", "ACGT*", None, 5),
        Record("empty", "record with no letters", "", None, 7),
        Record("chr3", "after a tab", "A-C.G", None, 8),
    ]
    assert len(records[0]) == 12


def test_fastq_records(tmp_path: Path) -> None:
    records = list(read_fastq(write(tmp_path / "r.fastq", FASTQ)))
    assert records == [
        Record("read1", "lane 3", "ACGTAC", "IIIIII", 1),
        Record("read2", "", "gg", "#!", 6),
    ]


def test_crlf_line_ends_and_no_final_newline(tmp_path: Path) -> None:
    path = write(tmp_path / "w.fasta", b">x\r\nAC\r\nGT\r\n>y\r\nTT")
    assert [(r.name, r.sequence) for r in read_sequences(path)] == [("x", "ACGT"), ("y", "TT")]


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
@pytest.mark.parametrize("suffix", [".fa", ".fa.gz"])
def test_old_mac_line_ends_read_as_any_others(tmp_path: Path, end: str, suffix: str) -> None:
    """Lines ending in a bare CR (old Mac OS) are lines, as in Biopython: the same records
    as from the same file with LF or CRLF ends, compressed or not, FASTA and FASTQ."""
    compress = gzip.compress if suffix.endswith(".gz") else (lambda b: b)
    fasta = write(tmp_path / f"a{suffix}", compress(FASTA.replace("\n", end).encode()))
    fastq = write(tmp_path / f"r{suffix.replace('fa', 'fq')}",
                  compress(FASTQ.replace("\n", end).encode()))  # fmt: skip
    assert list(read_fasta(fasta)) == list(read_fasta(write(tmp_path / "lf.fa", FASTA)))
    assert list(read_fastq(fastq)) == list(read_fastq(write(tmp_path / "lf.fq", FASTQ)))


def test_a_first_line_longer_than_the_peek_is_one_line(tmp_path: Path) -> None:
    description = "x" * 70_000  # the reader looks at 64 KiB of the first line for CRs
    path = write(tmp_path / "long.fa", f">a {description}\nACGT\n>b\nGG\n")
    records = list(read_sequences(path))
    assert [(r.name, r.description, r.sequence) for r in records] == [
        ("a", description, "ACGT"), ("b", "", "GG"),
    ]  # fmt: skip


def test_old_mac_line_ends_are_read_in_blocks(tmp_path: Path) -> None:
    """A file of bare CRs has no LF to end a line at: it is read in blocks, never whole, and
    a CR LF pair cut by a block's end is one line end (records and line numbers unchanged)."""
    line = "ACGTTGCAAC" * 8
    record = "\r".join([line] * 12) + "\r\n"  # one CR LF per record, where blocks may cut
    path = tmp_path / "mac.fa"
    path.write_bytes("".join(f">r{i}\r{record}" for i in range(3_000)).encode())
    count = last = 0
    tracemalloc.start()
    try:
        for rec in read_sequences(path):
            assert rec.sequence == line * 12, rec.name
            count, last = count + 1, rec.line
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, last) == (3_000, 2_999 * 13 + 1)
    assert path.stat().st_size > 2_800_000
    assert peak < 1 << 20, peak  # a few 64 KiB blocks and their lines, not the file


@pytest.mark.parametrize(
    ("suffix", "compress"),
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)],
)
def test_compressed_files_by_extension(tmp_path: Path, suffix: str, compress: Any) -> None:
    path = write(tmp_path / f"a.fa{suffix}", compress(FASTA.encode()))
    reader = read_sequences(path)
    assert reader.format == "fasta" and reader.size is None
    assert [r.name for r in reader] == ["chr1", "chr2", "empty", "chr3"]
    fq = write(tmp_path / f"r.fq{suffix}", compress(FASTQ.encode()))
    assert [r.quality for r in read_sequences(fq)] == ["IIIIII", "#!"]


def test_the_format_is_guessed_from_the_first_character(tmp_path: Path) -> None:
    fasta = write(tmp_path / "noext", "\n\n" + FASTA)
    fastq = write(tmp_path / "reads.txt", FASTQ)
    assert next(r.name for r in read_sequences(fasta)) == "chr1"
    assert next(r.quality for r in read_sequences(fastq)) == "IIIIII"
    assert list(read_sequences(write(tmp_path / "blank", "\n  \n"))) == []


def test_file_objects_text_and_binary() -> None:
    assert [r.name for r in read_sequences(io.StringIO(FASTA))] == ["chr1", "chr2", "empty", "chr3"]
    assert [r.name for r in read_fastq(io.BytesIO(FASTQ.encode()))] == ["read1", "read2"]
    with pytest.raises(SequenceFileError, match=r"<stream>: line 2: 'é' at column 2 is not ASCII"):
        list(read_sequences(io.StringIO(">x\nAéC\n")))


def test_progress_counts_bytes(tmp_path: Path) -> None:
    path = write(tmp_path / "a.fa", FASTA)
    reader = read_sequences(path)
    assert (reader.size, reader.bytes_read) == (len(FASTA), 0)
    next(iter(reader))
    assert 0 < reader.bytes_read < len(FASTA)
    list(reader)
    assert reader.bytes_read == len(FASTA)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.fa", "ACGT\n>x\nAC\n", "a.fa: line 1: 'ACGT' comes before the first header"),
        ("a.fa", ">x\nAC\n>\nGG\n", "a.fa: line 3: a header without a name"),
        ("a.fa", ">x\nAC\n>chr2\nACGT\nAC1T\n", "a.fa: record 'chr2' at line 5: '1' at column 3"),
        ("a.fa", ">x\nAC GT\n", "a.fa: record 'x' at line 2: ' ' at column 3 is not a sequence"),
        (
            "a.fa",
            b">x\nAC\xffGT\n",
            "a.fa: record 'x' at line 2: byte 0xff at column 3 is not a sequence letter",
        ),
        ("b.txt", "hello\n", "b.txt: line 1: 'hello' does not start a FASTA ('>') or FASTQ"),
        ("r.fq", "@r1\nACGT\n+\nIII\n", "r.fq: record 'r1' at line 4: the quality line has 3"),
        ("r.fq", "@r1\nACGT\n", "r.fq: record 'r1' at line 1: the file ends before the '+' line"),
        ("r.fq", "@r1\nACGT\n-\nIIII\n", "r.fq: record 'r1' at line 3: '-' where the '+' line"),
        ("r.fq", "@r1\nACGT\n+r2\nIIII\n", "r.fq: record 'r1' at line 3: the '+' line names 'r2'"),
        ("r.fq", "@r1\nAC\n+\nI \n", "r.fq: record 'r1' at line 4: the quality line has 1"),
        ("r.fq", "@r1\nAC\n+\nI\x7f\n", "r.fq: record 'r1' at line 4: '\\x7f' at column 2"),
        (
            "r.fq",
            "@r1\nAC\n+\nII\n@r2\nACG\n+\nIII\nACGT\n",
            "r.fq: line 9: 'ACGT' where a FASTQ record's '@name' line should be",
        ),
    ],
)
def test_malformed_files_are_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: str | bytes, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)  # files are named relative to the working directory
    path = write(tmp_path / name, content)
    with pytest.raises(SequenceFileError) as info:
        list(read_sequences(path))
    assert str(info.value).startswith(expected), str(info.value)
    assert isinstance(info.value, ValueError) and info.value.path == str(path)
    assert info.value.line is not None


def test_a_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark (Windows editors write one) is not part of the first line, in a
    FASTA, a FASTQ, a file whose format is guessed, a compressed one and a text stream."""
    bom = b"\xef\xbb\xbf"
    fasta = write(tmp_path / "a.fa", bom + FASTA.encode())
    reader = read_sequences(fasta)
    assert [r.name for r in reader] == ["chr1", "chr2", "empty", "chr3"]
    assert reader.bytes_read == reader.size == len(FASTA) + 3
    assert [r.name for r in read_sequences(write(tmp_path / "r.fq", bom + FASTQ.encode()))] == [
        "read1",
        "read2",
    ]
    assert next(iter(read_sequences(write(tmp_path / "noext", bom + FASTQ.encode())))).name == (
        "read1"
    )
    gz = write(tmp_path / "a.fa.gz", gzip.compress(bom + FASTA.encode()))
    assert next(iter(read_sequences(gz))).name == "chr1"
    assert next(iter(read_sequences(io.StringIO("\ufeff" + FASTA)))).name == "chr1"


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "a.fa",
            gzip.compress(FASTA.encode()),
            "a.fa: line 1: this looks gzip-compressed (it starts with bytes 1f 8b), not like "
            "ASCII text: name it a.fa.gz to have it decompressed as it is read",
        ),
        ("r.fq", bz2.compress(FASTQ.encode()), "r.fq: line 1: this looks bzip2-compressed"),
        ("noext", lzma.compress(FASTA.encode()), "noext: line 1: this looks xz-compressed"),
        (
            "a.fa.gz",
            gzip.compress(gzip.compress(FASTA.encode())),
            "a.fa.gz: line 1: this looks gzip-compressed (it starts with bytes 1f 8b) once "
            "decompressed: it was compressed twice; decompress it once",
        ),
        (
            "a.fa",
            b"\xff\xfe" + FASTA.encode("utf-16-le"),
            "a.fa: line 1: this looks UTF-16 text (it starts with the byte-order mark ff fe), "
            "not ASCII: save it as ASCII (or UTF-8) text",
        ),
        ("b.fq", b"\xfe\xff" + FASTQ.encode("utf-16-be"), "b.fq: line 1: this looks UTF-16"),
    ],
    ids=["gzip", "bzip2", "xz", "gzip-twice", "utf-16-le", "utf-16-be"],
)
def test_compressed_and_utf16_files_say_what_they_look_like(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: bytes, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / name, content)
    with pytest.raises(SequenceFileError) as info:
        list(read_sequences(path))
    message = str(info.value)
    assert message.startswith(expected), message
    assert info.value.path == str(path) and info.value.line == 1


def test_a_compressed_stream_says_what_it_looks_like() -> None:
    with pytest.raises(SequenceFileError) as info:
        list(read_sequences(io.BytesIO(gzip.compress(FASTA.encode()))))
    assert str(info.value) == (
        "<stream>: line 1: this looks gzip-compressed (it starts with bytes 1f 8b), not like "
        "ASCII text: decompress it before reading it"
    )


def test_records_before_the_error_are_read(tmp_path: Path) -> None:
    path = write(tmp_path / "a.fa", ">ok\nACGT\n>bad\nAC9\n")
    reader = iter(read_sequences(path))
    assert next(reader).name == "ok"
    with pytest.raises(SequenceFileError, match="record 'bad' at line 4"):
        next(reader)


def test_missing_files_directories_and_truncated_archives(tmp_path: Path) -> None:
    with pytest.raises(SequenceFileError, match=r"nope\.fa: no such file"):
        read_sequences(tmp_path / "nope.fa")
    with pytest.raises(SequenceFileError, match="is a directory"):
        read_sequences(tmp_path)
    whole = gzip.compress((">x\n" + "ACGT" * 50_000 + "\n").encode())
    path = write(tmp_path / "cut.fa.gz", whole[: len(whole) // 2])
    with pytest.raises(SequenceFileError, match=r"cut.fa.gz: cannot be read after line \d+"):
        list(read_sequences(path))
    with pytest.raises(ValueError, match="format must be 'fasta', 'fastq' or None"):
        read_sequences(tmp_path / "a.fa", format="genbank")


def test_a_large_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """About 24 MB of FASTA (24,000 records of 1,000 letters in lines of 80): the reader's peak
    of traced memory stays near one record, far below the file."""
    path = tmp_path / "big.fa"
    line = "ACGTTGCAAC" * 8
    record = "\n".join([line] * 12) + "\n" + line[:40] + "\n"
    with path.open("w") as out:
        for i in range(24_000):
            out.write(f">read{i} sample\n{record}")
    size = path.stat().st_size
    assert size > 20_000_000
    tracemalloc.start()
    try:
        count = letters = 0
        for rec in read_sequences(path):
            count += 1
            letters += len(rec.sequence)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, letters) == (24_000, 24_000 * 1000)
    assert peak < size / 100, (peak, size)


def test_letters_outside_the_alphabet_name_the_record(tmp_path: Path) -> None:
    path = write(tmp_path / "t.fa", ">ok\nACGT\n>odd\nACGUA\n")
    with pytest.raises(genomics.SequenceError, match=r"targets\[1\] \(record 'odd'\): 'U' at"):
        genomics.align_batch("ACGT", path)
    assert genomics.align_batch("ACGT", path, unknown="N").scores.tolist() == [8, 6]
