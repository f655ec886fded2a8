"""The table a statement works on, read from its fingerprint (``analyzer.statements.fingerprint``):
the table of a DDL, and whether a statement names a table. Pure."""

from __future__ import annotations

import re

import pandas as pd

#: The table of a DDL fingerprint: ``alter table t ...``, ``create index i on t``, ``drop table t``
#: (MySQL 8.4 Reference Manual, "Data Definition Statements").
DDL_TABLE_RE = re.compile(
    r"^(?:(?:alter|drop|truncate|optimize|repair|analyze|rename)\s+table|create\s+(?:unique\s+|fulltext\s+|"
    r"spatial\s+)?index\s+\S+\s+on)\s+(?:if\s+exists\s+)?`?([\w$.]+)`?",
    re.I,
)


def ddl_table(fingerprint: str) -> str | None:
    """The table (without its schema, lower case) a DDL fingerprint works on, None for another statement.

    >>> ddl_table("alter table shop.orders add column note text")
    'orders'
    """
    found = DDL_TABLE_RE.match(fingerprint)
    return found.group(1).split(".")[-1].lower() if found else None


def names_table(fingerprints: pd.Series, table: str) -> pd.Series:
    """Whether each fingerprint (strings, or NA) reads or writes ``table`` (``FROM``, ``JOIN``, ``UPDATE``,
    ``INTO`` or ``TABLE`` before its name, with or without a schema): a boolean Series on the same index."""
    pattern = rf"\b(?:from|join|update|into|table)\s+(?:`?\w+`?\.)?`?{re.escape(table)}`?\b"
    return (
        fingerprints.astype("string").str.contains(pattern, case=False, regex=True).fillna(False).astype(bool)
    )
