"""Query literals in what a shared link serves: a statement becomes its fingerprint (``scrub_sql``),
and in a processlist's raw lines (vertical ``\\G``, ``mysql -t`` table, ``mysql -B``) the ``Info`` of
each session, continuation lines included, is replaced by its fingerprint (``processlist_lines``);
``count_literals`` counts what a statement holds. Used by web/sharing/redaction/redactor.py.

Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from analyzer.statements.fingerprint import fingerprint

_SQ = re.compile(r"'(?:[^'\\]|\\.)*'", re.S)
_DQ = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NUM = re.compile(r"(?<![\w$.])(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?)(?![\w$])", re.I)
_UNCLOSED_QUOTE = re.compile(r"['\"].*", re.S)
#: Processlist raw text: marker, row separator, table border, a ``Field: value`` line of ``\G``.
_MARKER = re.compile(r"\A(?:TS|zzz) ")
_ROW = re.compile(r"\A\*+ \d+\. row \*+\s*\Z")
_BORDER = re.compile(r"\A\+[-+]*\+\s*\Z")
_FIELD = re.compile(r"\A(\s*)([A-Za-z_]+): ?(.*)\Z", re.S)
#: SHOW PROCESSLIST columns before Info (Id, User, Host, db, Command, Time, State).
_INFO_COLUMN = 7
#: The statement field of ``\G`` output: processlist ``Info``, performance_schema.threads
#: ``PROCESSLIST_INFO``.
INFO_FIELDS = frozenset({"Info", "PROCESSLIST_INFO"})


def count_literals(sql: str) -> int:
    """Literals of one statement: quoted strings, then numbers (not inside names) of what is left.

    >>> count_literals("SELECT * FROM t1 WHERE a = 'x' AND b IN (1, 2.5) AND c = n + 1")
    4
    """
    rest, strings = _SQ.subn("", sql)
    rest, dstrings = _DQ.subn("", rest)
    return strings + dstrings + len(_NUM.findall(rest))


def scrub_sql(statement: str) -> str:
    """A statement's fingerprint; what is left from an unclosed quote on (a statement cut in the
    middle of a string) becomes one ``?``.

    >>> scrub_sql("UPDATE stock SET qty = qty - 1 WHERE sku = 'A-1'")
    'update stock set qty = qty - ? where sku = ?'
    >>> scrub_sql("SELECT * FROM t WHERE note = 'cut in the mid")
    'select * from t where note = ?'
    """
    return _UNCLOSED_QUOTE.sub("?", fingerprint(statement))


#: The first words of SQL statements (MySQL 8.4 and MariaDB 11 manuals, "SQL Statements"): a text a
#: declared field holds is served as a statement (its fingerprint, identifiers included) only when it
#: begins with one; anything else there is rebuilt from safe words like any other text.
SQL_VERBS = frozenset(
    """
    select insert update delete replace call with values table show set begin start commit rollback
    savepoint release xa create alter drop rename truncate lock unlock flush kill grant revoke load
    handler do explain describe desc analyze optimize repair check checksum use prepare execute
    deallocate purge reset change stop install uninstall cache help binlog signal resignal get
    import backup shutdown restart clone
    """.split()
)
_FIRST_WORD = re.compile(r"[\s(]*([A-Za-z]+)")


def is_statement(text: str) -> bool:
    """Whether ``text`` begins as an SQL statement does (``SQL_VERBS``).

    >>> is_statement("select ? from t"), is_statement("(SELECT 1)"), is_statement("zz-secret value")
    (True, True, False)
    """
    first = _FIRST_WORD.match(text)
    return first is not None and first.group(1).lower() in SQL_VERBS


#: Where a statement begins inside a text (a finding quoting the query it saw, an evidence label, a
#: verdict's sentence): the shapes of SQL, not a sentence's "update" or "select".
_STATEMENT_START = re.compile(
    r"(?i)\b(?:select\b[^\n]*?\bfrom\b|update\s+[`\w.$]+\s+set\b|(?:insert|replace)(?:\s+(?:ignore|low_priority|delayed))?\s+into\b"
    r"|delete\s+(?:[`\w.$]+\s+)?from\b|call\s+[`\w.$]+\s*\()"
)


#: A row's values that MySQL's error messages quote (a replica's Last_SQL_Error, the error log, a finding
#: quoting them): "Duplicate entry '42-x' for key 'PRIMARY'" (ER_DUP_ENTRY), "Incorrect integer value:
#: 'x' for column" (ER_TRUNCATED_WRONG_VALUE_FOR_FIELD), "Data truncated ... value: 'x'". MySQL 8.4
#: Reference Manual, "Server Error Message Reference".
_ERROR_VALUES = re.compile(r"(?i)\b(duplicate entry|value:?) '.*?'(?= for (?:key|column)\b|[;,.]? *$)", re.M)


def error_values(text: str) -> str:
    """``text`` with the row values MySQL error messages quote as ``'?'``.

    >>> error_values("Error 'Duplicate entry 'a@b.c' for key 'PRIMARY'' on query")
    "Error 'Duplicate entry '?' for key 'PRIMARY'' on query"
    >>> error_values("Incorrect integer value: 'abc' for column 'n' at row 1")
    "Incorrect integer value: '?' for column 'n' at row 1"
    """
    return _ERROR_VALUES.sub(lambda m: f"{m.group(1)} '?'", text)


def statements_in_text(text: str, wrap: Callable[[str], str] = str) -> str:
    """``text`` with each statement it quotes as its fingerprint: from where a statement begins to
    the end of the text (a statement may span lines), or to the text's last such quote when a quote
    opened just before it; ``wrap`` is applied to each fingerprint (a redacted link marks it safe).

    >>> statements_in_text("query 'UPDATE orders SET n=n+1 WHERE id=42' ran 9 s")
    "query 'update orders set n=n+? where id=?' ran 9 s"
    >>> statements_in_text("Select the right isolation level; update statistics")
    'Select the right isolation level; update statistics'
    >>> statements_in_text("Last error: Duplicate entry 'x' for key 'PRIMARY'")
    "Last error: Duplicate entry '?' for key 'PRIMARY'"
    """
    text = error_values(text)
    out, at = [], 0
    for match in _STATEMENT_START.finditer(text):
        if match.start() < at:
            continue
        end = len(text)  # a statement may span lines: what follows it is read as part of it
        quote = text[match.start() - 1] if match.start() and text[match.start() - 1] in "'\"`" else ""
        if quote and text.rfind(quote, match.start(), end) > match.start():
            end = text.rfind(quote, match.start(), end)
        out += [text[at : match.start()], wrap(scrub_sql(text[match.start() : end]))]
        at = end
    return "".join(out) + text[at:] if out else text


def spread(out: list[str], start: int, text: str) -> None:
    """``text`` written over ``out`` from ``start`` on, a line of it per line of ``out``."""
    for i, line in enumerate(text.split("\n")):
        out[start + i] = line


def _is_structure(line: str) -> bool:
    return not line.strip() or bool(_MARKER.match(line) or _ROW.match(line) or _BORDER.match(line))


def _cells(line: str) -> tuple[str, list[str]] | None:
    """A ``mysql -t`` row (``| 7 | app | ...``) or a ``mysql -B`` row (tab-separated): its separator
    and cells; None for other lines."""
    if line.lstrip().startswith("|"):
        return "|", line.split("|")
    if "\t" in line:
        return "\t", line.split("\t")
    return None


def processlist_lines(
    lines: Iterable[str],
    fields: frozenset[str] = INFO_FIELDS,
    table_column: int | None = _INFO_COLUMN,
    scrub: Callable[[str], str] = scrub_sql,
) -> list[str]:
    """Raw lines with every statement replaced by its fingerprint, line for line (a multi-line
    statement's fingerprint on its first line, its other lines left empty).

    The value of a ``Field: value`` line whose field is one of ``fields`` (a processlist's ``Info``
    in ``\\G`` output), the cells from ``table_column`` on of a table or ``-B`` row (None: such
    rows are not told apart), and any line that is not a marker, a row separator, a border or a
    ``Field: value`` line (the lines of a statement that spans several) make a statement.
    ``scrub`` makes what a statement shows (its fingerprint); when what it makes has lines, they
    take the statement's lines (``spread``).

    >>> processlist_lines(["   Info: UPDATE t SET a = 'x'", "WHERE id = 42", "*** 2. row ***"])
    ['   Info: update t set a = ? where id = ?', '', '*** 2. row ***']
    """
    out: list[str] = []
    pending: list[str] | None = None  # the statement being gathered
    head = ""  # what comes before the statement on its first line
    start = 0  # index in out of the statement's first line
    orphan = False  # the statement began before these lines

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            sql = "\n".join(pending)
            if sql.strip().upper() in ("NULL", ""):
                out[start] = head + sql
            elif orphan and ("'" in sql or '"' in sql):
                out[start] = "?"  # begun before these lines: what precedes a quote may be inside a string
            else:
                spread(out, start, head + scrub(sql))
            pending = None

    for line in lines:
        field_ = _FIELD.match(line)
        if _is_structure(line) or (field_ and field_.group(2) not in fields):
            flush()
            out.append(line)
            continue
        if field_:  # Info: starts a statement
            flush()
            head, pending, start, orphan = line[: field_.start(3)], [field_.group(3)], len(out), False
            out.append(line)
            continue
        cells = _cells(line) if table_column is not None else None
        if cells and len(cells[1]) > table_column + (cells[0] == "|"):
            flush()
            sep, parts = cells
            at = table_column + (sep == "|")  # a table row starts with an empty cell before its first |
            if parts[at].strip() == "Info":  # the header line
                out.append(line)
                continue
            tail = sep.join(parts[at:])
            head, pending, start, orphan = sep.join(parts[:at]) + sep, [tail], len(out), False
            out.append(line)
            continue
        if pending is None:  # statement text whose first line is not among these lines
            head, pending, start, orphan = "", [line], len(out), True
            out.append(line)
            continue
        pending.append(line)
        out.append("")
    flush()
    return out
