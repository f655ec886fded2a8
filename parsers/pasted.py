"""Captures as people paste them: text that is not UTF-8, and ``vmstat -w -t`` rows with no header.

A capture copied into a ticket note arrives with prose or ``#`` comment lines around it (each parser
skips such lines with a warning naming them), Windows line ends (read as ``\\n``, parsers/pieces.py)
and, from a Windows editor or mail client, bytes of Windows-1252 (``é`` as the single byte 0xE9)
that are not UTF-8. ``decode`` reads those bytes as Windows-1252 instead of replacing them, and says
where the first one was. Not a format: used where members are decoded (parsers/pieces.py,
parsers/bundle.py) and by ``parsers.vmstat_headerless``.
"""

from __future__ import annotations

import codecs

from parsers.base import ParseWarning

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
