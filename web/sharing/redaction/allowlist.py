"""What a redacted link serves of a text: only tokens proven safe, every other word as ``?``.

A link that redacts anything does not look for what is dangerous in a text (a declared field, a
pattern): it rebuilds the text from what is known to be harmless, so a value in a shape no parser
foresaw (a statement's continuation line that looks like ``Word: ...``, a field nobody declared) is
never shown. Safe are:

- numbers with their units, the digits of times and counters (``parsers.vocabulary.is_number``), and
  the kernel's device names (``is_device``);
- the words of the text's vocabulary: a raw line's format's words (``parsers.vocabulary.format_words``),
  or, for every other text a link serves (findings, verdict, chart labels, sources), the words of
  every format and of Casebook's own texts (``casebook_words``);
- what the redaction itself wrote, marked with ``protect``: statement fingerprints and the pseudonyms
  the link assigns (``host-1``, ``db-2``, ``server-1``, ``host-3f9a1c``);
- ASCII punctuation and spaces. Any other character (a letter of another script glued to nothing
  safe, a symbol) becomes ``?`` with its word.

Marks are two characters of Unicode's private use area; ``unmarked`` takes them out of a capture's
own text before the redaction marks anything, so a capture cannot mark its own text safe.

Plain Python: no Django.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

from parsers import registry
from parsers.vocabulary import format_words, is_device, is_number, source_words

OPEN, CLOSE = "\ue000", "\ue001"
_MARKS = re.compile(f"[{OPEN}{CLOSE}]")
#: A word (letters of any script, digits, ``_``), or one character that is neither a word's nor
#: punctuation Casebook writes (ASCII's, ``…`` where a text was cut, ``·`` between a host and a
#: label, dashes, arrows, signs) nor a space.
_PIECE = re.compile(r"\w+|[^\w\s!-/:-@\[-`{-~…·—–→←≥≤×°±]")
#: Words of Casebook's units that are not ASCII.
_UNITS = frozenset({"µs", "µ"})
#: Where Casebook's own texts are written: the rules' and findings' words, chart titles, labels,
#: statuses, reasons (the string constants of these packages, docstrings excluded).
_OWN_PACKAGES = ("analyzer", "parsers", "web")
_ROOT = Path(__file__).resolve().parents[3]


def protect(text: str) -> str:
    """``text`` marked as written by the redaction (a fingerprint, a pseudonym): served as it is."""
    return f"{OPEN}{text}{CLOSE}" if text else text


def unmarked(text: str) -> str:
    """A capture's text with any mark character it holds as ``?`` (before anything is marked)."""
    return _MARKS.sub("?", text) if OPEN in text or CLOSE in text else text


def strip_marks(text: str) -> str:
    """``text`` without its marks, as served when nothing is rebuilt."""
    return _MARKS.sub("", text)


def rebuild(text: str, words: frozenset[str]) -> str:
    """``text`` with every word outside a protected span that is neither a number, a device name nor
    one of ``words`` (compared lower-cased) as ``?``, and without its marks.

    >>> rebuild("Id: 7 User: acme_app Info: " + protect("select ?"), frozenset({"id", "user", "info"}))
    'Id: 7 User: ? Info: select ?'
    >>> rebuild("sda 12.5 10.0.0.1 Müller ☃", frozenset({"sda"}))
    'sda 12.5 10.0.0.1 ? ?'
    """
    return strip_marks(outside(text, lambda piece: _words(piece, words)))


def outside(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to what lies outside its protected spans."""
    if OPEN not in text and CLOSE not in text:
        return change(text)
    out, depth, at = [], 0, 0
    for mark in _MARKS.finditer(text):
        piece = text[at : mark.start()]
        out.append(piece if depth else change(piece))
        out.append(mark.group())
        depth = depth + 1 if mark.group() == OPEN else max(depth - 1, 0)
        at = mark.end()
    piece = text[at:]
    out.append(piece if depth else change(piece))
    return "".join(out)


def _words(text: str, words: frozenset[str]) -> str:
    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.isascii() and (token.lower() in words or is_number(token) or is_device(token)):
            return token
        if token in _UNITS:
            return token
        return "?"

    return _PIECE.sub(one, text)


@functools.cache
def casebook_words() -> frozenset[str]:
    """The words of every registered format and of Casebook's own texts: what a finding, the verdict,
    a chart label or a source's description may show on a redacted link."""
    own = (
        source_words(path)
        for package in _OWN_PACKAGES
        for path in sorted((_ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    )
    return frozenset().union(*(format_words(m) for m in registry.parsers()), *own)
