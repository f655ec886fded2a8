"""A random word planted at every word position of every line of a member of every registered format
(continuation lines included) is never served by a redacted link's raw lines, but as an identifier of
a statement's fingerprint (statement fingerprints stay as they are: ``select c from <word>``).

The members are those of the planted bundle (tests/web/share_planted.py: real captures of every
format). Each distinct line (its digits aside) is planted at each of its words in turn, read with the
lines before it in its sample (a statement's first lines), and redacted as a link that redacts
everything and knows no value of the case (no pseudonym hides the word): what is left must come from
the format's own words, numbers and punctuation alone. The seed is printed on failure and can be
set with ``CASEBOOK_FUZZ_SEED``.
"""

from __future__ import annotations

import os
import random
import re
import string

import pytest

from parsers import registry
from tests.web.share_planted import members
from web.sharing.redaction import formats
from web.sharing.redaction.allowlist import CLOSE, OPEN, casebook_words, unmarked
from web.sharing.redaction.redactor import REDACT_ALL, Redactor, Vocabulary

SEED = int(os.environ.get("CASEBOOK_FUZZ_SEED", "20261207"))
#: Lines before a planted line read with it (its sample's: a statement's first lines, a table header).
CONTEXT = 12
_MARKER = re.compile(r"\A(?:TS|zzz) ")
_WORD = re.compile(r"\w+")


def _corpus() -> dict[str, list[list[str]]]:
    """Each registered format's members' lines."""
    out: dict[str, list[list[str]]] = {}
    for data in members().values():
        lines = data.decode("utf-8").splitlines()
        module = registry.detect(lines[: registry.HEAD_LINES])
        if module is not None:
            out.setdefault(module.FORMAT, []).append(lines)
    return out


CORPUS = _corpus()


def _plants(lines: list[str]):
    """(context, index of the planted line in it, start, end of the word) for every word of every
    distinct line (digits aside) of ``lines``."""
    seen: set[str] = set()
    start = 0
    for i, line in enumerate(lines):
        if _MARKER.match(line):
            start = i
        shape = re.sub(r"\d+", "0", line)
        if shape in seen:
            continue
        seen.add(shape)
        context = lines[max(start, i - CONTEXT) : i + 1]
        for word in _WORD.finditer(line):
            yield context, len(context) - 1, word.start(), word.end()


def _fingerprinted(fmt: str, lines: list[str], word: str, redactor: Redactor) -> bool:
    """Whether every place of ``word`` in ``lines`` lies inside a statement's fingerprint: what the
    redaction marks as its own before it rebuilds the rest (a declared statement field's, or a
    statement quoted in a line)."""
    sensitive = formats.sensitive_of(fmt)
    lines = [unmarked(x) for x in lines]
    if sensitive is not None and sensitive.has_statements:
        lines = formats.statement_text(sensitive, lines, formats._fingerprint)
    marked = "\n".join(redactor._replaced(x) for x in lines)
    depth, inside = 0, []
    for ch in marked:
        depth += ch == OPEN
        depth -= ch == CLOSE
        inside.append(depth > 0)
    spots = [m.start() for m in re.finditer(re.escape(word), marked, re.I)]
    return bool(spots) and all(inside[s] for s in spots)


@pytest.mark.parametrize("fmt", sorted(CORPUS))
def test_a_word_planted_anywhere_is_never_served_but_inside_a_fingerprint(fmt: str) -> None:
    rng = random.Random(f"{SEED}-{fmt}")
    redactor = Redactor(REDACT_ALL, Vocabulary(), b"fuzz")
    taken = casebook_words()
    leaks, planted = [], 0
    for lines in CORPUS[fmt]:
        for context, at, start, end in _plants(lines):
            word = "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))
            assert word not in taken
            line = context[at]
            trial = [*context[:at], line[:start] + word + line[end:]]
            served = "\n".join(formats.raw_lines(fmt, trial, redactor) or [])
            planted += 1
            if word in served.lower() and not _fingerprinted(fmt, trial, word, redactor):
                leaks.append((line, line[start:end], served.splitlines()[-1]))
    assert planted > 0
    assert leaks == [], f"seed {SEED}: {len(leaks)} of {planted} planted words served, e.g. {leaks[:5]}"


def test_a_statements_identifiers_are_served_as_its_fingerprint_and_nothing_else() -> None:
    """The one place a planted word shows: an identifier of a statement (fingerprints are shown as they
    are); the same word as a field that is not a statement, or as a statement's verb, is not."""
    redactor = Redactor(REDACT_ALL, Vocabulary(), b"fuzz")
    lines = ["   Info: SELECT c FROM zqtable WHERE id = 5", "  State: zqstate", "   Info: zqverb c FROM t"]
    assert formats.raw_lines("processlist", lines, redactor) == [
        "   Info: select c from zqtable where id = ?",
        "  State: ?",
        "   Info: ? c from t",
    ]
