"""What of a format's output can hold a customer's data: statements, MySQL users, client hosts, schemas.

Every parser module declares it at its end as ``SENSITIVE = Sensitive(...)``; the registry refuses a
module without one (``parsers.registry.parsers``). A share link redacts by these declarations
(web/sharing/redaction/formats.py): it collects the case's users, hosts and schemas from every
member's declared columns and lines, shows each declared statement as its fingerprint, and on a
redacted link withholds the raw lines of a format whose declaration it does not have.

A declaration names frame columns as ``"frame.column"`` and, for the raw lines a moment shows:

- ``statement_fields``: labels of ``Field: value`` lines (``\\G`` output) whose value is a statement;
  with them, any line that is not a row separator, a border, a ``TS`` marker or another field's line
  is statement text too (a statement spanning lines), so what is not recognised is redacted.
- ``table_statement_column``: in a ``mysql -t`` or ``mysql -B`` row, the index of the first cell that
  is statement text (SHOW PROCESSLIST: 7, ``Info``); that cell and the ones after it.
- ``result_tables``: the lines are query results as MySQL Shell writes them (a ``# `` header naming
  the columns by tabs, then rows): the cells from the first column named in ``statement_fields`` on
  are statement text, and so is every line that is not a whole row (a value continued on the lines
  after its row). ``result_columns``: ``(kind, column name)`` of such tables whose cells are a
  ``user``, ``host`` or ``schema`` (a column no frame keeps: SHOW REPLICA STATUS ``Source_User``).
- ``line_patterns``: regular expressions searched in every raw line; a named group ``statement*`` is
  statement text, ``literal*`` a value of a row (an InnoDB record dump), ``user*``, ``host*``,
  ``schema*`` values the case's vocabulary collects (and the link replaces wherever they appear).
- ``statement_after`` / ``statement_until``: statement text runs on the lines after one matching
  ``statement_after`` until a line matching ``statement_until`` (the InnoDB monitor prints a
  transaction's statement under its ``MySQL thread id`` line).

``words``: the word lists (parsers/words/, ``parsers.vocabulary.WORD_LISTS``) whose words the format
prints of its own, beside those of its parser's string constants: a redacted link serves a raw line's
word only when its format's vocabulary holds it (parsers/vocabulary.py).

``Sensitive()`` with nothing named is a declaration too: the format holds none of these (vmstat); its
lines still lose passwords, addresses and every value the case's other members named.

Plain Python: no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parsers.vocabulary import WORD_LISTS

#: Group names of ``line_patterns`` by kind (a pattern's group is ``<kind>`` or ``<kind>_<n>``).
KINDS = ("statement", "literal", "user", "host", "schema")


@dataclass(frozen=True)
class Sensitive:
    """A format's sensitive fields (see the module docstring). Columns are ``"frame.column"``;
    ``clients``: InnoDB's ``host [address] user state`` of a ``MySQL thread id`` line; ``servers``:
    other MySQL servers (a replica's source: its binary logs are named after it)."""

    statements: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    schemas: tuple[str, ...] = ()
    clients: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()
    statement_fields: frozenset[str] = frozenset()
    table_statement_column: int | None = None
    result_tables: bool = False
    result_columns: tuple[tuple[str, str], ...] = ()
    line_patterns: tuple[re.Pattern[str], ...] = ()
    statement_after: re.Pattern[str] | None = None
    statement_until: re.Pattern[str] | None = None
    words: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for column in (
            *self.statements,
            *self.users,
            *self.hosts,
            *self.schemas,
            *self.clients,
            *self.servers,
        ):
            if column.count(".") != 1:
                raise ValueError(f"{column!r}: a sensitive column is named 'frame.column'")
        for pattern in self.line_patterns:
            for group in pattern.groupindex:
                if group.split("_")[0] not in KINDS:
                    raise ValueError(f"{pattern.pattern!r}: group {group!r} is none of {KINDS}")
        for name in self.words:
            if name not in WORD_LISTS:
                raise ValueError(f"{name!r}: a word list is one of {WORD_LISTS}")
        if (self.statement_after is None) != (self.statement_until is None):
            raise ValueError("statement_after and statement_until go together")

    def columns(self, kind: str) -> tuple[str, ...]:
        """The declared ``"frame.column"`` names of ``kind`` (statements, users, hosts, schemas, clients,
        servers)."""
        return getattr(self, kind)

    @property
    def has_columns(self) -> bool:
        """Whether a parsed frame holds something to collect."""
        return bool(
            self.statements or self.users or self.hosts or self.schemas or self.clients or self.servers
        )

    @property
    def collects(self) -> bool:
        """Whether the case's vocabulary reads this format: declared columns or collecting patterns."""
        return (
            self.has_columns
            or bool(self.result_columns)
            or any(
                not g.startswith(("statement", "literal")) for p in self.line_patterns for g in p.groupindex
            )
        )

    @property
    def has_statements(self) -> bool:
        """Whether the raw lines may hold statement text (then redacted line by line)."""
        return bool(
            self.statements
            or self.statement_fields
            or self.table_statement_column is not None
            or self.result_tables
            or self.statement_after is not None
            or any(g.startswith(("statement", "literal")) for p in self.line_patterns for g in p.groupindex)
        )


#: A system format with none of these fields: it prints the kernel's and the system tools' words.
SYSTEM = Sensitive(words=("linux",))
#: A MySQL format with none of these fields: it prints the server's words.
SERVER = Sensitive(words=("mysql",))


def declared(module: object) -> Sensitive | None:
    """The ``SENSITIVE`` of a parser module, or None when it declares none (or something else)."""
    value = getattr(module, "SENSITIVE", None)
    return value if isinstance(value, Sensitive) else None
