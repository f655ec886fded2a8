"""Captures as people paste them: prose and ``#`` lines around them, bytes that are not UTF-8.

A capture copied into a ticket note arrives with prose or ``#`` comment lines around it, Windows line
ends (read as ``\\n``, parsers/ingest/pieces.py), no banner, and, from a Windows editor or mail client,
bytes of Windows-1252 (``é`` as the single byte 0xE9) that are not UTF-8. ``decode`` reads those
bytes as Windows-1252 instead of replacing them, and says where the first one was. ``strip_note``
blanks the prose and comment lines before and after the capture (and ``#`` lines anywhere), keeping
the line numbering, for a second reading when the parser refused the member as it came
(parsers/ingest/pieces.py). ``vmstat -w -t`` rows without their header: ``parsers.vmstat_headerless``.
Not a format.
"""

from __future__ import annotations

import codecs
import re

from parsers.base import ParseWarning

#: A pasted note is a small member; a larger one that fails is not read a second time.
PASTED_MAX_BYTES = 1 << 20
#: Prose: words of letters (with the punctuation of a sentence), no number token, no column marks.
_WORD = re.compile(r"^[^\W\d_]{2,}[,.:;!?)]*$")
_PROSE_MIN_WORDS = 2
#: A word of a sentence that may hold a number or a command (``Here's``, ``on-call``, ``10``): letters
#: with inner apostrophes or hyphens, and the sentence's punctuation.
_LOOSE_WORD = re.compile(r"^[(\"'\u2018\u201c]?[^\W\d_]+(?:['\u2019-][^\W\d_]+)*[,.:;!?)\"'\u2019\u201d]*$")
#: A sentence that mentions numbers or a command: at least this many tokens, this share of them words.
_SENTENCE_MIN_TOKENS = 5
_SENTENCE_WORD_SHARE = 0.7
#: Markdown code fences around a pasted capture (```` ``` ````, ``~~~``, with a language name).
_FENCE = re.compile(r"^\s*(?:```|~~~)")

ERRORS = "casebook-cp1252"


def _cp1252(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the undecodable bytes read as Windows-1252 (bytes cp1252 leaves
    undefined, 0x81 0x8D 0x8F 0x90 0x9D, as U+FFFD)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return bad.decode("cp1252", "replace"), exc.end


codecs.register_error(ERRORS, _cp1252)


def decode(data: bytes, first_line: int = 1) -> tuple[str, ParseWarning | None]:
    """``data`` as text: UTF-8, and where it is not, Windows-1252, with a ``not-utf8`` warning
    naming the first such line (``first_line`` is the line number of ``data``'s first line).

    >>> decode("caf\\u00e9".encode("cp1252"))
    ('café', ParseWarning(line_no=1, code='not-utf8', message='bytes that are not UTF-8 (first at line 1) were read as Windows-1252 (cp1252)'))
    """
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        warning = ParseWarning(
            line,
            "not-utf8",
            f"bytes that are not UTF-8 (first at line {line}) were read as Windows-1252 (cp1252)",
        )
        return data.decode("utf-8", ERRORS), warning


def _is_prose(line: str) -> bool:
    """A line of a sentence or a greeting (``Hi team,``, ``Thanks, Bob.``, ``here is vmstat:``): at
    least one word ending in sentence punctuation or two words, all of letters; never a line with a
    number, ``%``, ``/`` or ``-`` (tool headers: ``Device r/s``, ``procs ---memory---``)."""
    tokens = [t for t in line.replace("(", " ").replace(")", " ").split() if t.strip(",.:;!?")]
    if not tokens:
        return False
    if _is_sentence(line):
        return True
    if any(ch in line for ch in "%/-=|*0123456789"):
        return False
    if not all(_WORD.match(t) for t in tokens):
        return False
    return len(tokens) >= _PROSE_MIN_WORDS or tokens[-1][-1] in ",.:;!?" or tokens[0].istitle()


def _is_sentence(line: str) -> bool:
    """A sentence that mentions numbers or a command (``We saw it again, it lasted 10 minutes.``,
    ``Here's what mpstat -P ALL 5 showed:``, ``- collect pt-stalk next time``): at least
    ``_SENTENCE_MIN_TOKENS`` tokens, ``_SENTENCE_WORD_SHARE`` of them words, no column marks (``%``,
    ``|``, ``=``, tabs) and never two numbers in a row (a row of a table)."""
    if any(ch in line for ch in "%|=\t"):
        return False
    tokens = line.split()
    if len(tokens) < _SENTENCE_MIN_TOKENS:
        return False
    numeric = [any(c.isdigit() for c in t) for t in tokens]
    if any(a and b for a, b in zip(numeric, numeric[1:], strict=False)):
        return False
    words = sum(bool(_LOOSE_WORD.match(t)) for t in tokens)
    return words >= _SENTENCE_WORD_SHARE * len(tokens)


def strip_note(text: str) -> tuple[str, list[int]]:
    """``text`` with the note around a pasted capture blanked: ``#`` lines and Markdown code fences
    anywhere, and prose or blank lines before the first and after the last line that is neither; returns the
    new text (same number of lines) and the 1-based numbers of the lines blanked that had text.

    >>> strip_note("Hi team,\\nhere it is:\\n r b swpd\\n 1 0 0\\n# end\\nThanks, Bob.\\n")
    ('\\n\\n r b swpd\\n 1 0 0\\n\\n\\n', [1, 2, 5, 6])
    """
    lines = text.split("\n")
    note = [
        ln.lstrip().startswith("#") or not ln.strip() or bool(_FENCE.match(ln)) or _is_prose(ln)
        for ln in lines
    ]
    capture = [i for i, is_note in enumerate(note) if not is_note]
    if not capture:
        return text, []
    first, last = capture[0], capture[-1]
    skipped = []
    for i, line in enumerate(lines):
        if line.strip() and (i < first or i > last or line.lstrip().startswith("#") or _FENCE.match(line)):
            lines[i] = ""
            skipped.append(i + 1)
    return "\n".join(lines), skipped


def ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``1-3, 7``."""
    out: list[str] = []
    for n in numbers:
        if out and int(out[-1].split("-")[-1]) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)
