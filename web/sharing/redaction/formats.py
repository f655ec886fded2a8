"""Each format's raw lines and frames redacted by what its parser declares (``SENSITIVE``,
parsers/sensitive.py): the one place a share link learns which fields of a capture hold statements,
MySQL users, client hosts and schemas.

- ``raw_lines``: one sample's raw lines as a link shows them: declared statement text as
  fingerprints, declared row values as ``?`` (when the link redacts literals), then every line
  through the link's redactor (passwords, addresses, and every host, user, schema and server name
  the case's members named). A format without a declaration is withheld (``None``) on a link that
  redacts anything: what is not known to be harmless is not shown.
- ``collect``: the users, hosts, schemas and statements of one parsed piece of a member, from its
  declared columns and lines, into a ``VocabularyBuilder``.

Plain Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import pandas as pd

from parsers import registry
from parsers.sensitive import Sensitive, declared
from parsers.vocabulary import format_words
from web.sharing.redaction.allowlist import protect, unmarked
from web.sharing.redaction.literals import is_statement, processlist_lines, scrub_sql, spread
from web.sharing.redaction.redactor import Redactor, VocabularyBuilder, host_of

#: What a redacted link shows instead of the raw lines of a format that declares nothing.
WITHHELD = (
    "(these lines are not shown on this link: Casebook does not know which of this format's fields "
    "hold statements, users, hosts or schemas)"
)


def sensitive_of(fmt: str) -> Sensitive | None:
    """The declaration of format ``fmt`` (a ``FORMAT`` of parsers/registry.py), None when no
    registered parser reads it or its parser declares nothing."""
    try:
        return declared(registry.by_format(fmt))
    except KeyError:
        return None


def raw_lines(fmt: str, lines: list[str], redactor: Redactor) -> list[str] | None:
    """One sample's raw lines of a member of format ``fmt`` as the link shows them; None when they
    are withheld (an undeclared format on a link that redacts something).

    On a link that redacts anything, each line is rebuilt from tokens proven safe
    (web/sharing/redaction/allowlist.py): the format's own words (``parsers.vocabulary.format_words``),
    numbers and punctuation, the pseudonyms the link assigns and the statement text its declaration
    finds (as fingerprints when the link redacts literals); any other word is ``?``."""
    if not redactor.choices.any:
        return [redactor.text(line) for line in lines]
    sensitive = sensitive_of(fmt)
    if sensitive is None:
        return None
    lines = [unmarked(line) for line in lines]
    if sensitive.has_statements:
        lines = statement_text(sensitive, lines, _fingerprint if redactor.choices.literals else _as_is)
    words = format_words(registry.by_format(fmt))
    return [redactor.line(line, words) for line in lines]


def _fingerprint(statement: str) -> str:
    """A statement as a redacted link shows it: its fingerprint, marked safe when it begins as a
    statement does (``is_statement``; other text in a statement's field is rebuilt from safe words)."""
    fingerprint = scrub_sql(statement)
    return protect(fingerprint) if is_statement(fingerprint) else fingerprint


def _as_is(statement: str) -> str:
    """A statement on a link that shows literals: as captured, each line marked safe when it begins
    as a statement does."""
    if not is_statement(statement):
        return statement
    return "\n".join(protect(line) for line in statement.split("\n"))


def statement_text(
    sensitive: Sensitive, lines: list[str], scrub: Callable[[str], str] = scrub_sql
) -> list[str]:
    """``lines`` with the statement text and row values that ``sensitive`` declares replaced by
    ``scrub`` of them (fingerprints) and ``?`` (row values, when ``scrub`` fingerprints), line for line."""
    if sensitive.result_tables:
        lines = result_table_lines(lines, sensitive.statement_fields, scrub)
    elif sensitive.statement_fields or sensitive.table_statement_column is not None:
        lines = processlist_lines(lines, sensitive.statement_fields, sensitive.table_statement_column, scrub)
    if sensitive.statement_after is not None:
        lines = _statements_after(sensitive, lines, scrub)
    patterns = [p for p in sensitive.line_patterns if any(_redacting(g) for g in p.groupindex)]
    if patterns:
        lines = [_masked(patterns, line, scrub) for line in lines]
    return lines


def result_table_lines(
    lines: list[str], statement_columns: frozenset[str], scrub: Callable[[str], str] = scrub_sql
) -> list[str]:
    r"""Query results as MySQL Shell writes them (``# `` and the column names joined by tabs, then a
    line per row, a value holding a newline continued on the next lines): in a whole row, the cells
    from the first of ``statement_columns`` on as a fingerprint (``scrub``); every other line that
    is not a ``#`` line, as its fingerprint (a continued value: it may be a statement's middle).

    >>> result_table_lines(["# Id\tUser\tInfo", "7\tapp\tSELECT 'a'", "WHERE id = 42\tx", "#"], frozenset({"Info"}))
    ['# Id\tUser\tInfo', '7\tapp\tselect ?', 'where id = ? x', '#']
    """
    out, width, at = [], 0, None
    for line in lines:
        if line.startswith("#"):
            names = line[2:].split("\t") if line.startswith("# ") and "\t" in line else None
            if names:
                width = len(names)
                at = next((i for i, n in enumerate(names) if n.strip() in statement_columns), None)
            out.append(line)
            continue
        cells = line.split("\t")
        if width and len(cells) == width:
            out.append(line if at is None else "\t".join([*cells[:at], scrub("\t".join(cells[at:]))]))
        else:
            out.append(scrub(line) if line.strip() else line)
    return out


def _redacting(group: str) -> bool:
    """A group whose text is replaced (statement text, a row's value), not collected."""
    return group.startswith(("statement", "literal"))


def _masked(patterns: list[re.Pattern[str]], line: str, scrub: Callable[[str], str] = scrub_sql) -> str:
    """``line`` with every ``statement*`` group of ``patterns`` as ``scrub`` of it (its fingerprint)
    and every ``literal*`` group as ``?`` (as it is, marked safe, when ``scrub`` keeps statements)."""
    for pattern in patterns:
        spans = []
        for match in pattern.finditer(line):
            for group, value in match.groupdict().items():
                if value and _redacting(group):
                    literal = protect(value) if scrub is _as_is else "?"
                    spans.append((*match.span(group), scrub(value) if group[0] == "s" else literal))
        for start, end, new in sorted(spans, reverse=True):
            line = line[:start] + new + line[end:]
    return line


def _statements_after(
    sensitive: Sensitive, lines: list[str], scrub: Callable[[str], str] = scrub_sql
) -> list[str]:
    """The statement text that runs after each ``statement_after`` line until a ``statement_until``
    line: its fingerprint on its first line, its other lines left empty."""
    out: list[str] = []
    block: list[str] = []
    inside = False

    def flush() -> None:
        if block:
            spread(out, len(out) - len(block), scrub("\n".join(block)))
            block.clear()

    for line in lines:
        if inside and sensitive.statement_until.match(line) is None:
            block.append(line)
            out.append("")
            continue
        flush()
        inside = sensitive.statement_after.match(line) is not None
        out.append(line)
    flush()
    return out


def collect(builder: VocabularyBuilder, sensitive: Sensitive, frames: dict[str, pd.DataFrame]) -> None:
    """The declared users, hosts, schemas, InnoDB clients and statements of one parsed piece."""
    for kind, into in (("users", builder.users), ("schemas", builder.schemas)):
        for values in _columns(frames, sensitive.columns(kind)):
            into.update(str(v) for v in values)
    for values in _columns(frames, sensitive.hosts):
        builder.hosts.update(host_of(str(v)) for v in values)
    for values in _columns(frames, sensitive.clients):
        for client in values:
            host, user = client_parts(str(client))
            builder.hosts.update(host)
            builder.users.update(user)
    for name in sensitive.statements:
        frame, column = name.split(".")
        if frame in frames and column in frames[frame]:
            builder.add_statements(frames[frame][column])
    for values in _columns(frames, sensitive.servers):
        builder.add_source_hosts(values)


def _columns(frames: dict[str, pd.DataFrame], names: Iterable[str]) -> Iterable[list[object]]:
    for name in names:
        frame, column = name.split(".")
        if frame in frames and column in frames[frame]:
            yield list(frames[frame][column].dropna().unique())


def collect_lines(builder: VocabularyBuilder, sensitive: Sensitive, lines: Iterable[str]) -> None:
    """The users, hosts and schemas that ``line_patterns`` find in raw lines (a schema group may
    hold a comma-separated list: SHOW SLAVE STATUS ``Replicate_Do_DB``)."""
    into = {"user": builder.users, "host": builder.hosts, "schema": builder.schemas}
    if sensitive.result_columns:
        lines = list(lines)
        _collect_cells(into, sensitive.result_columns, lines)
    patterns = [p for p in sensitive.line_patterns if any(not _redacting(g) for g in p.groupindex)]
    if not patterns:
        return
    for line in lines:
        for pattern in patterns:
            for match in pattern.finditer(line):
                for group, value in match.groupdict().items():
                    kind = group.split("_")[0]
                    if value and kind in into:
                        values = value.split(",") if kind == "schema" else [value]
                        into[kind].update(host_of(v) if kind == "host" else v.strip() for v in values)


def _collect_cells(into: dict[str, set[str]], columns: tuple[tuple[str, str], ...], lines: list[str]) -> None:
    """The cells of MySQL Shell result rows under the columns named in ``columns``."""
    wanted: list[tuple[int, str]] = []
    width = 0
    for line in lines:
        if line.startswith("# ") and "\t" in line:
            names = [n.strip() for n in line[2:].split("\t")]
            width = len(names)
            wanted = [(names.index(name), kind) for kind, name in columns if name in names]
        elif wanted and not line.startswith("#"):
            cells = line.split("\t")
            if len(cells) == width:
                for i, kind in wanted:
                    if cells[i] and cells[i] != "NULL":
                        into[kind].add(host_of(cells[i]) if kind == "host" else cells[i])


def client_parts(client: str) -> tuple[list[str], list[str]]:
    """The hosts and user of an InnoDB ``MySQL thread id`` line's client part: ``host user state``
    (MySQL) or ``host address user state`` (MariaDB); a lone word is a host.

    >>> client_parts("_gateway 172.31.10.1 sysbench updating")
    (['_gateway', '172.31.10.1'], ['sysbench'])
    >>> client_parts("10.0.0.5 shop_app Sending data"), client_parts("localhost")
    ((['10.0.0.5'], ['shop_app']), (['localhost'], []))
    """
    words = client.split()
    if len(words) > 2 and _ADDRESS.fullmatch(words[1]):
        return words[:2], [words[2]]
    return words[:1], words[1:2]


_ADDRESS = re.compile(r"[\d.]+|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*")
