"""Query fingerprints: SQL text with its literals abstracted, as ``pt-fingerprint`` computes them.

The rules are those of Percona Toolkit's ``QueryRewriter::fingerprint`` (pt-fingerprint /
pt-query-digest 3.x, default options: no ``--match-md5-checksums``, no ``--match-embedded-numbers``),
applied in the same order:

1. special cases: a mysqldump ``SELECT /*!40001 SQL_NO_CACHE */ * FROM `` -> ``mysqldump``; a
   Percona Toolkit checksum query -> ``percona-toolkit``; ``administrator command: ...`` as is;
   ``CALL proc(...)`` -> ``call proc``; a multi-row ``INSERT``/``REPLACE`` cut after its first row;
2. comments removed (``/* */`` but not ``/*! */``, ``--`` and ``#`` to end of line);
   ``USE db`` -> ``use ?``;
3. quoted strings, numbers (also inside names: ``foo_1`` -> ``foo_?``), ``NULL``, ``TRUE``/``FALSE``
   -> ``?``; whitespace collapsed; lower-cased;

   one deliberate difference: pt-fingerprint (3.2.1, checked against the real tool) takes any
   ``+`` or ``-`` for the start of a number, so ``n + 1`` becomes ``n ? ?``, ``k=k+1`` ``k=k?``,
   ``a-b`` ``a?`` and ``0x1F`` ``?f``. Here a number starts with a digit, a hexadecimal ``0x..``
   is one number, and a sign belongs to a number only where it cannot be an operator (at the
   start, after ``(``, ``,``, another operator or a keyword such as ``SELECT``/``WHERE``/``AND``):
   ``n + 1`` -> ``n + ?``, ``c = -4`` -> ``c = ?``. Only literals become ``?``; operators stay.
4. ``IN (?, ?)`` / ``VALUES (?, ?), (?)`` -> ``in(?+)`` / ``values(?+)``; repeated ``UNION`` of the
   same select -> ``/*repeat union*/``; ``LIMIT ?, ?`` / ``LIMIT ? OFFSET ?`` -> ``limit ?``;
   ``ASC`` dropped after ``ORDER BY``;
5. a statement cut inside a string keeps it open (``identified by 'secr``): its password is masked
   (``parsers.passwords.mask_secrets``: ``identified by '***'``), a second deliberate difference.

>>> fingerprint("SELECT * FROM t WHERE id IN (1, 2, 3) AND name = 'bob' LIMIT 10, 20")
'select * from t where id in(?+) and name = ? limit ?'
>>> fingerprint("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')")
'insert into t (a, b) values(?+)'
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from parsers.passwords import mask_secrets

# Percona Toolkit QueryRewriter.pm, package-level regexes.
_OLC = re.compile(r"(?:--|#)[^'\"\r\n]*(?=[\r\n]|\Z)")  # one-line comments
_MLC = re.compile(r"/\*[^!].*?\*/", re.S)  # multi-line comments, but not /*!version */

_MYSQLDUMP = re.compile(r"\ASELECT /\*!40001 SQL_NO_CACHE \*/ \* FROM `")
_TOOLKIT = re.compile(r"/\*\w+\.\w+:[0-9]/[0-9]\*/")
_CALL = re.compile(r"\A\s*(call\s+\S+)\(", re.I)
_MULTI_INSERT = re.compile(
    r"\A((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\(", re.I | re.S
)
_USE = re.compile(r"\Ause \S+(?=\n?\Z)", re.I)
_ESCAPED_QUOTE = re.compile(r"\\[\"']")
_DQ_STRING = re.compile(r'".*?"', re.S)
_SQ_STRING = re.compile(r"'.*?'", re.S)
# A number: hexadecimal, or a digit and what may follow it (a decimal point, an exponent with its
# sign, pt's broad [0-9a-f.xb] tail); a leading sign is settled by _SIGN once numbers are ``?``.
# Written as a digit first (``0x..`` is a ``0`` followed by ``x``), the same matches as
# ``0x[0-9a-fA-F]+|[0-9][0-9a-f.xb]*...``: a pattern that starts with a character class lets the
# regex engine skip to the next digit, where an alternation is tried at every position (half the time).
_NUMBER = re.compile(r"[0-9](?:(?<=0)x[0-9a-fA-F]+|[0-9a-f.xb]*(?:(?<=e)[+-][0-9]+)?)")
_LEFTOVER = re.compile(r"[xb.]\?")
# A + or - before a number is its sign (not an operator) at the start, after an opening
# parenthesis, a comma, another operator or a keyword that an operand follows.
_SIGN = re.compile(
    r"(\A|[(,=<>!*/%^&|~+-]|\b(?:select|where|and|or|not|set|when|then|else|by|in|values?|like"
    r"|between|is|limit|offset|interval|return|having|on)\b)(\s*)[+-]\s*\?",
    re.I,
)
_LEADING_WS = re.compile(r"\A\s+")
_WS = re.compile(r"[ \n\t\r\f]+")
_NULL = re.compile(r"\bnull\b")
_IN_VALUES = re.compile(r"\b(in|values?)(?:[\s,]*\([\s?,]*\))+")
_PARENS = re.compile(r"\([\s?,]*\)")  # what _IN_VALUES needs: a list of placeholders in parentheses
_UNION = re.compile(r"\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+")
_LIMIT = re.compile(r"\blimit \?(?:, ?\?| offset \?)?")
_ORDER_BY = re.compile(r"\bORDER BY ", re.I)
_ASC = re.compile(r"(.+?)\s+ASC", re.I)


def fingerprint(sql: str) -> str:
    """The pt-fingerprint fingerprint of one statement (see the module docstring for the rules).

    ``sql``: one statement's text, as in processlist ``Info`` or a slow log. Never raises.

    >>> fingerprint("select  name\\n from users   where id=42 -- by id")
    'select name from users where id=? '
    >>> fingerprint("SELECT * FROM orders_2024 ORDER BY created ASC, id ASC")
    'select * from orders_? order by created, id'
    >>> fingerprint("CALL update_stats(1, 'x')")
    'call update_stats'
    >>> fingerprint("use sbtest")
    'use ?'
    """
    done, query = _prepared(sql)
    return query if done else _normalised(_literals(query))


def _prepared(sql: str) -> tuple[bool, str]:
    """The rules before literals are abstracted (special cases, comments, ``USE``) on one statement:
    ``(True, fingerprint)`` when a special case settles it, else ``(False, statement)`` with comments
    removed and a multi-row ``INSERT`` cut, ready for ``_literals``."""
    query = sql
    if _MYSQLDUMP.match(query):
        return True, "mysqldump"
    if "/*" in query and _TOOLKIT.search(query):
        return True, "percona-toolkit"
    if query.startswith("administrator command: "):
        return True, query
    m = _CALL.match(query)
    if m:
        return True, m.group(1).lower()
    m = _MULTI_INSERT.match(query) if query[:1] in "iIrR" else None  # INSERT/REPLACE, any case
    if m:
        query = m.group(1)  # shorten multi-row INSERT statements at once, as pt does

    # Each pattern runs only where its literal part occurs: a search led by \b or a class costs
    # about 1.3 us a statement, a substring test 50 ns, and a processlist holds up to a million
    # distinct statements. The tests are necessary conditions: results are unchanged.
    if "/*" in query:
        query = _MLC.sub("", query)
    if "--" in query or "#" in query:
        query = _OLC.sub("", query)
    if query[:1] in "uU":
        query, n = _USE.subn("use ?", query)
        if n:
            return True, query
    return False, query


def _literals(query: str, dq: re.Pattern[str] = _DQ_STRING, sq: re.Pattern[str] = _SQ_STRING) -> str:
    """Quoted strings (``dq``, ``sq``) and numbers of one statement (after ``_prepared``) as ``?``."""
    if "\\" in query:
        query = _ESCAPED_QUOTE.sub("", query)
    if '"' in query:
        query = dq.sub("?", query)
    if "'" in query:
        query = sq.sub("?", query)
    return _NUMBER.sub("?", query)


# The same string patterns for statements joined by NUL (``_literals_all``): a string stops at the end
# of its statement. On a statement without NUL, ``'[^'\x00]*'`` matches what ``'.*?'`` matches.
_DQ_STRINGS = re.compile('"[^"\x00]*"')
_SQ_STRINGS = re.compile("'[^'\x00]*'")


def _literals_all(queries: list[str]) -> list[str]:
    """``_literals`` of each statement, the patterns run once over the statements joined by NUL:
    a processlist piece has thousands of distinct statements, and four pattern calls a statement
    cost more than the scan itself. No pattern matches across a NUL, so each statement's matches
    are its own; statements that hold a NUL are done one by one."""
    joined = "\x00".join(queries)
    if joined.count("\x00") != max(len(queries) - 1, 0):
        return [_literals(q) for q in queries]
    return _literals(joined, _DQ_STRINGS, _SQ_STRINGS).split("\x00") if queries else []


#: Distinct statements with their literals abstracted whose fingerprint is remembered.
NORMALISED_CACHE = 1 << 16


@functools.lru_cache(maxsize=NORMALISED_CACHE)
def _normalised(query: str) -> str:
    """The rest of the rules (leftover signs, white space, case, NULL, ``IN`` lists, ``UNION``,
    ``LIMIT``, ``ASC``) on a statement whose strings and numbers are already ``?``. Statements that
    differ only in their literals meet here (a processlist of OLTP traffic has a million distinct
    statements and a few hundred shapes), so the result is remembered."""
    query = _LEFTOVER.sub("?", query)
    if "-" in query or "+" in query:
        query = _SIGN.sub(r"\1\2?", query)

    query = _LEADING_WS.sub("", query)
    if query.endswith("\n"):  # Perl chomp: one trailing newline only
        query = query[:-1]
    query = _WS.sub(" ", query)
    query = query.lower()
    if "null" in query:
        query = _NULL.sub("?", query)
    if "(" in query and _PARENS.search(query):
        query = _IN_VALUES.sub(r"\1(?+)", query)
    if "union" in query:
        query = _UNION.sub(r"\1 /*repeat\2*/", query)
    if "limit ?" in query:
        query = _LIMIT.sub("limit ?", query, count=1)

    m = _ORDER_BY.search(query) if "order by " in query else None
    if m:
        # Perl: `1 while s/\G(.+?)\s+ASC/$1/gi` from the end of ORDER BY: drop each chained ASC.
        pos = m.end()
        kept: list[str] = []
        while True:
            a = _ASC.match(query, pos)
            if not a:
                break
            kept.append(a.group(1))
            pos = a.end()
        if kept:
            query = query[: m.end()] + "".join(kept) + query[pos:]
    if "'" in query or '"' in query:
        # A statement cut inside a string (SHOW PROCESSLIST keeps 100 characters of Info) keeps what
        # it quoted: a password after IDENTIFIED BY is masked there (series names and page labels).
        query = mask_secrets(query)
    return query


def fingerprint_all(statements: list[str], cache: dict[str, str] | None = None) -> list[str]:
    """``fingerprint`` of each of ``statements`` (distinct statement texts, e.g. processlist ``Info``),
    in order: the same results, with the literals of the statements not in ``cache`` (statement ->
    fingerprint, filled here) abstracted in one pass (``_literals_all``), and the rules before them
    (``_prepared``) run only on the statements they can change (``_special``).

    >>> fingerprint_all(["SELECT 1", "use shop", "select 'a' from t"])
    ['select ?', 'use ?', 'select ? from t']
    """
    memo = cache if cache is not None else {}
    prints = [memo.get(s) for s in statements]
    fresh = [i for i, found in enumerate(prints) if found is None]
    pending: list[int] = []
    queries: list[str] = []
    for i, special in zip(fresh, _special([statements[i] for i in fresh]).tolist(), strict=True):
        done, query = _prepared(statements[i]) if special else (False, statements[i])
        if done:
            prints[i] = memo[statements[i]] = query
        else:
            pending.append(i)
            queries.append(query)
    for i, query in zip(pending, _literals_all(queries), strict=True):
        prints[i] = memo[statements[i]] = _normalised(query)
    return prints  # type: ignore[return-value]


#: First characters of the statements ``_prepared`` may change (``administrator command``, ``CALL``),
#: besides white space (``CALL`` may follow it) and an empty text.
_SPECIAL_FIRST = frozenset("aAcC")
#: Text of the statements ``_prepared`` may change wherever it occurs: comments (mysqldump's and
#: Percona Toolkit's queries hold one).
_SPECIAL_TEXT = ("/*", "--", "#")
#: What a multi-row ``INSERT`` holds between two rows (``_MULTI_INSERT``).
_ROW_GAP = re.compile(r"\)\s*,\s*\(")


def _special(statements: list[str]) -> np.ndarray:
    """Per statement, whether ``_prepared`` may change it (a bool array): every other statement goes
    to ``_literals`` as it is. Its first four characters are read at once, its comment marks and
    gaps between rows found by searches over the statements joined (no gap spans a NUL)."""
    four = np.array(statements, dtype="U4")  # shorter for a shorter statement
    first = four.astype("U1")
    odd = [c for c in np.unique(first).tolist() if c in _SPECIAL_FIRST or c.isspace() or not c]
    special = np.isin(first, odd)
    special |= np.isin(first, ["u", "U"]) & (np.char.str_len(four) == 4) & np.char.endswith(four, " ")  # use
    joined = "\x00".join(statements)
    special[texts_holding(statements, joined, _SPECIAL_TEXT)] = True
    rows = np.zeros(len(statements), dtype=bool)
    rows[_placed(statements, [m.start() for m in _ROW_GAP.finditer(joined)])] = True
    return special | (rows & np.isin(first, ["i", "I", "r", "R"]))


def texts_holding(texts: list[str], joined: str, words: tuple[str, ...]) -> list[int]:
    """The positions in ``texts`` of the texts that hold any of ``words`` (in order, each once).

    ``joined``: the texts joined by one character (``"\\x00".join(texts)``), or a text of the same
    offsets (the join lower-cased, when the texts are ASCII); a word is looked for with ``str.find``
    over all of it at once, then its offset placed in its text.

    >>> texts_holding(["select 1", "show status", "use x"], "select 1|show status|use x", ("show", "x"))
    [1, 2]
    """
    hits: list[int] = []
    for word in words:
        at = joined.find(word)
        while at >= 0:
            hits.append(at)
            at = joined.find(word, at + 1)
    return _placed(texts, hits)


def _placed(texts: list[str], offsets: list[int]) -> list[int]:
    """The positions in ``texts`` (joined by one character) of the texts that hold ``offsets`` of the
    join, in order, each once."""
    if not offsets:
        return []
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts[:-1]), dtype=np.int64, count=len(texts) - 1) + 1, out=starts[1:])
    return np.unique(np.searchsorted(starts, offsets, side="right") - 1).tolist()


def fingerprints(series: pd.Series, cache: dict[str, str] | None = None) -> pd.Series:
    """``fingerprint`` of every value of ``series`` (same index and name, ``string`` dtype; missing
    values stay missing, as <NA>).

    Each distinct statement is fingerprinted once: a processlist repeats the same few statements
    thousands of times. ``cache`` (statement -> fingerprint) carries that across calls, e.g. over
    the chunks of one capture.

    >>> fingerprints(pd.Series(["SELECT 1", None, "SELECT 1", "select 2"])).tolist()
    ['select ?', <NA>, 'select ?', 'select ?']
    """
    present = series.notna().to_numpy()
    out = np.full(len(series), None, dtype=object)
    if present.any():
        codes, uniques = pd.factorize(series[present].astype(str), sort=False)
        prints = np.empty(len(uniques), dtype=object)
        prints[:] = fingerprint_all(uniques.tolist(), cache)
        out[present] = prints[codes]
    return pd.Series(out, index=series.index, dtype="string", name=series.name)
