"""Alphabets, encoding and scoring schemes for local alignment.

An :class:`Alphabet` maps letters to the codes ``0 .. k-1`` that every variant of the
alignment ops works on (a ``uint8`` array per sequence); a :class:`Scoring` holds the ``k x k``
substitution matrix over those codes (``int32``) and the two gap penalties.

Conventions, shared with parasail and Biopython's ``PairwiseAligner`` so that the three agree
exactly:

* Penalties are non-negative numbers *subtracted* from the score: a gap of length ``L`` costs
  ``gap_open + (L - 1) * gap_extend`` (the first gap position costs ``gap_open``, each further
  one ``gap_extend``), and ``gap_open >= gap_extend``.  BLAST counts differently (``open + L *
  extend``): BLAST's "11/1" for BLOSUM62 is ``gap_open=12, gap_extend=1`` here.
* Letters are case-insensitive: lowercase (soft-masked) letters are folded to upper case, as
  aligners treat soft masking by default.
* A letter outside the alphabet is an error naming the letter, its position and the alphabet
  (:class:`SequenceError`), unless the caller asks for a substitute (``unknown="N"`` for DNA,
  ``unknown="X"`` for proteins): then every unknown letter is aligned as that one.  Silently
  dropping or guessing letters would shift every position reported after them.

NumPy is imported when a scheme or an encoding is first used, not at import: the example
arguments of the ops (``ops.py``, imported at plugin discovery, which must stay cheap) make
their scheme only when ``prism bench`` or ``prism.tune`` asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from prism_core import PrismError
from prism_core.backend_kit import did_you_mean

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Codes = npt.NDArray[np.uint8]
    Matrix = npt.NDArray[np.int32]

__all__ = [
    "BLOSUM62",
    "DNA",
    "DNAFULL",
    "PROTEIN",
    "Alphabet",
    "Scoring",
    "SequenceError",
    "encode",
    "get_scoring",
]


class SequenceError(PrismError, ValueError):
    """A sequence that cannot be encoded: a letter outside the alphabet, a non-ASCII character,
    a code out of range.  ``position`` is the 0-based index of the first offending letter
    (``None`` when the problem is not one letter), ``record`` the FASTA/FASTQ record it came
    from when known."""

    __module__ = "prism_genomics"

    def __init__(
        self,
        message: str,
        *,
        letter: str | None = None,
        position: int | None = None,
        alphabet: Alphabet | None = None,
        record: str | None = None,
    ) -> None:
        super().__init__(message)
        self.letter = letter
        self.position = position
        self.alphabet = alphabet
        self.record = record


_UNMAPPED = 255


class Alphabet:
    """Letters and their codes: ``letters[i]`` has code ``i``.

    Lowercase letters are folded to upper case; :meth:`encode` turns a sequence into codes.
    Alphabets compare equal when their letters do.
    """

    __module__ = "prism_genomics"
    __slots__ = ("_table", "letters", "name")

    def __init__(self, letters: str, name: str) -> None:
        if not isinstance(letters, str) or not letters:
            raise TypeError(f"Alphabet(): letters must be a non-empty str, got {letters!r}")
        if len(letters) > 255:
            raise ValueError(
                f"Alphabet({name!r}): at most 255 letters (codes are uint8), got {len(letters)}"
            )
        upper = letters.upper()
        if len(set(upper)) != len(upper):
            dup = sorted({c for c in upper if upper.count(c) > 1})
            raise ValueError(
                f"Alphabet({name!r}): letters repeat (case-insensitively): {''.join(dup)!r}"
            )
        bad = [c for c in upper if not (c.isascii() and c.isprintable() and not c.isspace())]
        if bad:
            raise ValueError(
                f"Alphabet({name!r}): letters must be printable ASCII without spaces; got "
                f"{''.join(bad)!r}"
            )
        self.letters = upper
        self.name = name
        self._table: Any = None  # the 256-entry lookup table, built on first use

    def __len__(self) -> int:
        return len(self.letters)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Alphabet) and other.letters == self.letters

    def __hash__(self) -> int:
        return hash(self.letters)

    def __repr__(self) -> str:
        return f"Alphabet({self.letters!r}, name={self.name!r})"

    def table(self) -> npt.NDArray[np.uint8]:
        """The byte -> code lookup table (255 for bytes outside the alphabet)."""
        table = self._table
        if table is None:
            import numpy as np

            table = np.full(256, _UNMAPPED, dtype=np.uint8)
            for code, letter in enumerate(self.letters):
                table[ord(letter)] = code
                table[ord(letter.lower())] = code
            table.flags.writeable = False
            self._table = table
        return table  # type: ignore[no-any-return]

    def code(self, letter: str) -> int:
        """The code of one letter (case-insensitive); a :class:`SequenceError` if it has none."""
        index = self.letters.find(letter.upper()) if len(letter) == 1 else -1
        if index < 0:
            raise SequenceError(
                f"{letter!r} is not a letter of the {self.name} alphabet {self.letters!r}",
                letter=letter,
                alphabet=self,
            )
        return index

    def encode(self, sequence: Any, *, unknown: str | None = None, what: str = "sequence") -> Codes:
        """``sequence`` as codes; see :func:`encode`."""
        return encode(sequence, self, unknown=unknown, what=what)

    def decode(self, codes: Iterable[int]) -> str:
        """The letters (upper case) of ``codes``."""
        letters = self.letters
        return "".join(letters[int(c)] for c in codes)


#: Nucleotides: the four bases and N (any base).  IUPAC ambiguity codes other than N are not
#: letters of it: pass ``unknown="N"`` to align them as N.
DNA = Alphabet("ACGTN", "DNA")
#: The 24 letters of BLOSUM62, in NCBI's order: the 20 amino acids, B (N or D), Z (Q or E),
#: X (any) and ``*`` (stop).
PROTEIN = Alphabet("ARNDCQEGHILKMFPSTWYVBZX*", "protein")


def _where(what: str, record: str | None) -> str:
    return f"{what} (record {record!r})" if record else what


def _way_out(alphabet: Alphabet) -> str:
    # The letter that stands for any: X (any amino acid) before N, which is asparagine in a
    # protein alphabet; never the last letter, which is '*' (a stop) in PROTEIN.
    for wildcard in "XN":
        if wildcard in alphabet.letters:
            return f"pass unknown={wildcard!r} to align unknown letters as {wildcard!r}"
    return "pass unknown=LETTER (one of the alphabet's) to align unknown letters as that one"


def encode(
    sequence: Any,
    alphabet: Alphabet = DNA,
    *,
    unknown: str | None = None,
    what: str = "sequence",
    record: str | None = None,
) -> Codes:
    """Encode ``sequence`` as a 1-d ``uint8`` array of codes of ``alphabet``.

    :param sequence: a ``str``, ``bytes``/``bytearray``/``memoryview`` (ASCII letters), or a
        1-d NumPy array of integer codes (checked to be in ``0 .. len(alphabet) - 1``; an
        array of another integer dtype is converted).  Lowercase letters are folded to upper
        case.
    :param unknown: ``None`` (the default): a letter outside the alphabet is an error naming
        it and its position.  A letter of the alphabet (``"N"``, ``"X"``): unknown letters are
        encoded as that letter.
    :param what: how messages name the sequence (``"query"``, ``"targets[3]"``).
    :param record: the FASTA/FASTQ record name, for messages.
    :raises SequenceError: a letter outside the alphabet, a non-ASCII character, a code out
        of range (a ``ValueError``).
    :raises TypeError: something that is not a sequence.
    """
    import numpy as np

    if not isinstance(alphabet, Alphabet):
        raise TypeError(
            f"alphabet must be a prism_genomics.Alphabet (DNA, PROTEIN), got {alphabet!r}"
        )
    substitute: int | None = None
    if unknown is not None:
        if not isinstance(unknown, str):
            raise TypeError(f"unknown must be None or one letter of the alphabet, got {unknown!r}")
        substitute = alphabet.code(unknown)
    if isinstance(sequence, np.ndarray):
        return _check_codes(sequence, alphabet, what, record)
    if isinstance(sequence, str):
        try:
            raw = sequence.encode("ascii")
        except UnicodeEncodeError as exc:
            char = sequence[exc.start]
            raise SequenceError(
                f"{_where(what, record)}: {char!r} at position {exc.start} is not an ASCII "
                f"letter; the {alphabet.name} alphabet is {alphabet.letters!r}",
                letter=char,
                position=exc.start,
                alphabet=alphabet,
                record=record,
            ) from None
    elif isinstance(sequence, (bytes, bytearray, memoryview)):
        raw = bytes(sequence)
    else:
        raise TypeError(
            f"{_where(what, record)} must be a str, bytes or a 1-d NumPy array of codes; got "
            f"{type(sequence).__name__}"
        )
    data = np.frombuffer(raw, dtype=np.uint8)
    codes = alphabet.table()[data]
    bad = codes == _UNMAPPED
    if bad.any():
        if substitute is None:
            position = int(np.argmax(bad))
            byte = raw[position]
            letter = chr(byte)
            shown = repr(letter) if 32 <= byte < 127 else f"byte 0x{byte:02x}"
            raise SequenceError(
                f"{_where(what, record)}: {shown} at position {position} is not a letter of the "
                f"{alphabet.name} alphabet {alphabet.letters!r} (lowercase is folded to upper "
                f"case); {_way_out(alphabet)}",
                letter=letter,
                position=position,
                alphabet=alphabet,
                record=record,
            )
        codes[bad] = substitute
    return codes


def _check_codes(array: Any, alphabet: Alphabet, what: str, record: str | None) -> Codes:
    import numpy as np

    if array.ndim != 1:
        raise SequenceError(
            f"{_where(what, record)}: an array of codes must be 1-d; got shape {array.shape}",
            alphabet=alphabet,
            record=record,
        )
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(
            f"{_where(what, record)}: an array of codes must have an integer dtype (uint8); got "
            f"{array.dtype}"
        )
    k = len(alphabet)
    if array.size:
        low, high = int(array.min()), int(array.max())
        if low < 0 or high >= k:
            position = int(np.argmax((array < 0) | (array >= k)))
            raise SequenceError(
                f"{_where(what, record)}: code {int(array[position])} at position {position} "
                f"is out of range for the {alphabet.name} alphabet {alphabet.letters!r} "
                f"(codes 0..{k - 1})",
                position=position,
                alphabet=alphabet,
                record=record,
            )
    return np.ascontiguousarray(array, dtype=np.uint8)


def _penalty(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        import numpy as np

        if not isinstance(value, np.integer):
            raise TypeError(f"{name} must be an int >= 0 (a penalty), got {value!r}")
    penalty = int(value)
    if penalty < 0:
        raise ValueError(
            f"{name} must be >= 0: penalties are subtracted from the score (a gap of length L "
            f"costs gap_open + (L - 1) * gap_extend); got {penalty}"
        )
    if penalty >= 1 << 24:
        raise ValueError(f"{name} must be below 2**24, got {penalty}")
    return penalty


class Scoring:
    """A scoring scheme: a substitution matrix over an alphabet, and gap penalties.

    :param matrix: ``k x k`` integer scores, ``matrix[a, b]`` for aligning code ``a`` of the
        query with code ``b`` of the target (stored as a read-only ``int32`` array).
    :param alphabet: the :class:`Alphabet` of the codes (``k = len(alphabet)``).
    :param gap_open: what the first position of a gap costs (>= 0).
    :param gap_extend: what each further position costs (>= 0).
    :param name: for messages and reports.

    Schemes are immutable; :meth:`with_gaps` gives one with other penalties.
    """

    __module__ = "prism_genomics"
    __slots__ = ("alphabet", "gap_extend", "gap_open", "matrix", "name")

    matrix: Matrix
    alphabet: Alphabet
    gap_open: int
    gap_extend: int
    name: str

    def __init__(
        self, matrix: Any, alphabet: Alphabet, gap_open: int, gap_extend: int, name: str = "custom"
    ) -> None:
        import numpy as np

        if not isinstance(alphabet, Alphabet):
            raise TypeError(
                f"Scoring(): alphabet must be a prism_genomics.Alphabet, got {alphabet!r}"
            )
        m = np.asarray(matrix)
        k = len(alphabet)
        if m.shape != (k, k):
            raise ValueError(
                f"Scoring({name!r}): matrix must be {k} x {k} (one row and column per letter of "
                f"{alphabet.letters!r}); got shape {m.shape}"
            )
        integral = np.issubdtype(m.dtype, np.integer) or (
            np.issubdtype(m.dtype, np.floating) and bool(np.all(m == np.round(m)))
        )
        if not integral:
            raise TypeError(
                f"Scoring({name!r}): matrix scores must be integers; got dtype {m.dtype}"
            )
        if m.size and (m.min() < -(1 << 24) or m.max() >= 1 << 24):
            raise ValueError(f"Scoring({name!r}): matrix scores must lie within +-2**24")
        frozen = np.array(m, dtype=np.int32)
        frozen.flags.writeable = False
        set_ = object.__setattr__
        set_(self, "matrix", frozen)
        set_(self, "alphabet", alphabet)
        opening, extending = _penalty(gap_open, "gap_open"), _penalty(gap_extend, "gap_extend")
        if opening < extending:
            raise ValueError(
                f"Scoring({name!r}): gap_open ({opening}) must be >= gap_extend ({extending}): "
                "when opening a gap costs less than extending one, closing and reopening beats "
                "extending, and aligners (parasail, Biopython) disagree on what the gap costs"
            )
        set_(self, "gap_open", opening)
        set_(self, "gap_extend", extending)
        set_(self, "name", str(name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Scoring is immutable; use with_gaps() (setting {name!r})")

    @classmethod
    def match_mismatch(
        cls,
        match: int = 2,
        mismatch: int = -3,
        alphabet: Alphabet = DNA,
        gap_open: int = 5,
        gap_extend: int = 2,
    ) -> Scoring:
        """``match`` on the diagonal, ``mismatch`` everywhere else (every letter, N included,
        matches itself: the rule of parasail's ``matrix_create``).  The defaults are BLASTN's
        (reward 2, penalty -3, gaps 5/2 in BLASTN's own counting)."""
        import numpy as np

        for value, what in ((match, "match"), (mismatch, "mismatch")):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"Scoring.match_mismatch(): {what} must be an int, got {value!r}")
        k = len(alphabet)
        matrix = np.full((k, k), int(mismatch), dtype=np.int32)
        np.fill_diagonal(matrix, int(match))
        return cls(
            matrix, alphabet, gap_open, gap_extend, name=f"match {match}/mismatch {mismatch}"
        )

    def with_gaps(self, gap_open: int | None = None, gap_extend: int | None = None) -> Scoring:
        """This scheme with other gap penalties (``None`` keeps the current one)."""
        if gap_open is None and gap_extend is None:
            return self
        return Scoring(
            self.matrix,
            self.alphabet,
            self.gap_open if gap_open is None else gap_open,
            self.gap_extend if gap_extend is None else gap_extend,
            name=self.name,
        )

    def score(self, a: str, b: str) -> int:
        """The substitution score of letters ``a`` and ``b``."""
        value: int = self.matrix[self.alphabet.code(a), self.alphabet.code(b)].item()
        return value

    def __eq__(self, other: object) -> bool:
        import numpy as np

        return (
            isinstance(other, Scoring)
            and other.alphabet == self.alphabet
            and other.gap_open == self.gap_open
            and other.gap_extend == self.gap_extend
            and bool(np.array_equal(other.matrix, self.matrix))
        )

    def __hash__(self) -> int:
        return hash((self.alphabet, self.gap_open, self.gap_extend, self.matrix.tobytes()))

    def __repr__(self) -> str:
        return (
            f"<Scoring {self.name!r} over {self.alphabet.name} ({len(self.alphabet)} letters), "
            f"gap_open={self.gap_open}, gap_extend={self.gap_extend}>"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "alphabet": self.alphabet.letters,
            "gap_open": self.gap_open,
            "gap_extend": self.gap_extend,
            "matrix": self.matrix.tolist(),
        }


class _Lazy:
    """A built-in scheme made on first use (it needs NumPy; importing this module must not)."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._value: Scoring | None = None

    def get(self) -> Scoring:
        if self._value is None:
            self._value = self._make()
        return self._value


# NCBI's BLOSUM62 (Henikoff & Henikoff 1992), rows and columns in PROTEIN's order.
_BLOSUM62 = """
 4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0 -2 -1  0 -4
-1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3 -1  0 -1 -4
-2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3  3  0 -1 -4
-2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3  4  1 -1 -4
 0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1 -3 -3 -2 -4
-1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2  0  3 -1 -4
-1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2  1  4 -1 -4
 0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3 -1 -2 -1 -4
-2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3  0  0 -1 -4
-1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3 -3 -3 -1 -4
-1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1 -4 -3 -1 -4
-1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2  0  1 -1 -4
-1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1 -3 -1 -1 -4
-2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1 -3 -3 -1 -4
-1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2 -2 -1 -2 -4
 1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2  0  0  0 -4
 0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0 -1 -1  0 -4
-3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3 -4 -3 -2 -4
-2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1 -3 -2 -1 -4
 0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4 -3 -2 -1 -4
-2 -1  3  4 -3  0  1 -1  0 -3 -4  0 -3 -3 -2  0 -1 -4 -3 -3  4  1 -1 -4
-1  0  0  1 -3  3  4 -2  0 -3 -3  1 -1 -3 -1  0 -1 -3 -2 -2  1  4 -1 -4
 0 -1 -1 -1 -2 -1 -1 -1 -1 -1 -1 -1 -1 -1 -2  0  0 -2 -1 -1 -1 -1 -1 -4
-4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4  1
"""


def _blosum62() -> Scoring:
    import numpy as np

    rows = [[int(v) for v in line.split()] for line in _BLOSUM62.strip().splitlines()]
    return Scoring(np.array(rows), PROTEIN, 11, 1, name="BLOSUM62")


def _dnafull() -> Scoring:
    # EMBOSS's EDNAFULL (NCBI's NUC.4.4) restricted to ACGTN: +5 / -4 between bases, -2 for N
    # against a base, -1 for N against N.  EMBOSS water's default gaps are 10 / 0.5; penalties
    # here are integers, so 10 / 1.
    import numpy as np

    matrix = np.full((5, 5), -4, dtype=np.int32)
    np.fill_diagonal(matrix, 5)
    matrix[4, :] = matrix[:, 4] = -2
    matrix[4, 4] = -1
    return Scoring(matrix, DNA, 10, 1, name="DNAFULL")


def _dna() -> Scoring:
    scheme = Scoring.match_mismatch()
    return Scoring(scheme.matrix, DNA, scheme.gap_open, scheme.gap_extend, name="dna")


_BUILTIN: dict[str, _Lazy] = {
    "dna": _Lazy(_dna),
    "dnafull": _Lazy(_dnafull),
    "blosum62": _Lazy(_blosum62),
}


def get_scoring(
    scoring: str | Scoring = "dna", gap_open: int | None = None, gap_extend: int | None = None
) -> Scoring:
    """The scheme ``scoring`` names (``"dna"``: match 2 / mismatch -3, gaps 5/2;
    ``"dnafull"``: NUC.4.4 over ACGTN, gaps 10/1; ``"blosum62"``: gaps 11/1), or ``scoring``
    itself, with the penalties replaced where given."""
    if isinstance(scoring, Scoring):
        scheme = scoring
    elif isinstance(scoring, str):
        lazy = _BUILTIN.get(scoring.lower().replace("_", "").replace(".", ""))
        if lazy is None and scoring.upper() in ("NUC44", "NUC.4.4", "EDNAFULL"):
            lazy = _BUILTIN["dnafull"]
        if lazy is None:
            raise ValueError(
                f"unknown scoring {scoring!r}{did_you_mean(scoring.lower(), _BUILTIN)}; give "
                f"one of {', '.join(map(repr, _BUILTIN))} or a prism_genomics.Scoring"
            )
        scheme = lazy.get()
    else:
        raise TypeError(
            f"scoring must be a name ({', '.join(map(repr, _BUILTIN))}) or a "
            f"prism_genomics.Scoring, got {scoring!r}"
        )
    return scheme.with_gaps(gap_open, gap_extend)


if TYPE_CHECKING:
    BLOSUM62: Scoring
    DNAFULL: Scoring


def __getattr__(name: str) -> Any:
    # BLOSUM62, DNAFULL: made on first access (they need NumPy).
    if name == "BLOSUM62":
        return _BUILTIN["blosum62"].get()
    if name == "DNAFULL":
        return _BUILTIN["dnafull"].get()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
