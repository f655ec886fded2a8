"""Redaction of what a shared link serves: query literals, client hosts, MySQL users and schemas.

A case is stored as captured; what a customer's link shows is redacted when it is served, with the
choices of that link (:class:`Choices`). :class:`Redactor` takes the values a case holds (its
:class:`Vocabulary`, collected from the capture's processlist by :class:`VocabularyBuilder`) and
gives each one a pseudonym that is the same everywhere on the link: ``host-1``, ``user-2``, ``db-3``
(numbered in sorted order of the values, so every response of the link agrees without state).

- **Literals**: statement text becomes its fingerprint (``analyzer.fingerprint``: strings and
  numbers -> ``?``). In a processlist's raw lines (vertical ``\\G``, ``mysql -t`` table, ``mysql -B``)
  the ``Info`` of each session, continuation lines included, is replaced by its fingerprint; a line
  of a processlist that is not recognised as one of its fields is treated as statement text.
- **Hosts, users, schemas**: each known value, as a whole token (not inside a longer name:
  ``app`` is not replaced in ``app1`` or ``application``), is replaced in every string served:
  page text, chart labels, moment rows, raw lines, JSON and CSV cells. Hosts also lose their
  ``:port``-less form's case (DNS names are case-insensitive); any IPv4 address that is not a known
  host gets a keyed pseudonym ``host-<6 hex>`` (the same on the whole link).
- Built-in accounts and schemas (``root``, ``system user``, ``event_scheduler``, ``mysql``,
  ``information_schema``, ``performance_schema``, ``sys``) and loopback hosts are the same on every
  server and are kept.

Pure Python (and pandas for the builder): no Django. Replacement goes the safe way: a value is also
replaced where it happens to be a word of prose (a schema named ``orders`` in "orders table").
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from analyzer.fingerprint import fingerprint

#: Values the same on every MySQL/MariaDB server: never taken for customer data.
BUILTIN_USERS = frozenset(
    {
        "root",
        "system user",
        "event_scheduler",
        "unauthenticated user",
        "DELAYED",
        "mysql.sys",
        "mysql.session",
    }
)
BUILTIN_SCHEMAS = frozenset({"mysql", "information_schema", "performance_schema", "sys", "NULL"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", ""})
#: Whole-token boundaries: a value is not replaced inside a longer name (``app`` in ``app1``,
#: ``web`` in ``web-01``); dots, quotes, backticks, ``@``, ``:`` and spaces end a token.
_BEFORE = r"(?<![\w$-])"
_AFTER = r"(?![\w$-])"
_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w]|\.\d)"
)
#: Texts are cut to 80 characters or more (chart labels 80, evidence 200-500, statements 2,000):
#: a word ending a shorter text, with no ``…`` after it, is whole.
MIN_CUT_AT = 60
#: A token where texts are cut (at the end, before an ellipsis or a closing quote): checked for the
#: beginning of a known value (``acme_bil…`` of ``acme_billing``).
_CUT = re.compile(r"(?<![\w$.-])[\w$.-]{3,}(?=…|'|\Z)")
_PORT = re.compile(r":\d+\Z")
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
#: Formats whose raw lines hold statements (processlist, pt-stalk -threads).
STATEMENT_FORMATS = frozenset({"processlist", "threads"})


@dataclass(frozen=True)
class Choices:
    """What a link redacts: literals (statement text -> fingerprints), hosts, users, schemas."""

    literals: bool = True
    hosts: bool = True
    users: bool = True
    schemas: bool = True

    @property
    def any(self) -> bool:
        return self.literals or self.hosts or self.users or self.schemas


#: Everything redacted: what a new link does unless the engineer chooses otherwise.
REDACT_ALL = Choices()


@dataclass
class Vocabulary:
    """The values of one case that a link may redact, as captured: client hosts (without port),
    MySQL users, schemas (processlist ``db``); ``literals``: literals in the capture's statements
    (every session snapshot counted), ``statements``: session snapshots with a statement."""

    hosts: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    schemas: list[str] = field(default_factory=list)
    literals: int = 0
    statements: int = 0

    def as_json(self) -> dict[str, object]:
        return {
            "hosts": self.hosts,
            "users": self.users,
            "schemas": self.schemas,
            "literals": self.literals,
            "statements": self.statements,
        }

    @classmethod
    def from_json(cls, data: dict[str, object] | None) -> Vocabulary:
        data = data or {}
        return cls(
            hosts=list(data.get("hosts", [])),
            users=list(data.get("users", [])),
            schemas=list(data.get("schemas", [])),
            literals=int(data.get("literals", 0)),
            statements=int(data.get("statements", 0)),
        )


def count_literals(sql: str) -> int:
    """Literals of one statement: quoted strings, then numbers (not inside names) of what is left.

    >>> count_literals("SELECT * FROM t1 WHERE a = 'x' AND b IN (1, 2.5) AND c = n + 1")
    4
    """
    rest, strings = _SQ.subn("", sql)
    rest, dstrings = _DQ.subn("", rest)
    return strings + dstrings + len(_NUM.findall(rest))


class VocabularyBuilder:
    """Collects a :class:`Vocabulary` from processlist frames (``parsers.processlist``: columns
    ``user``, ``host``, ``db``, ``info``), one piece of a capture at a time."""

    def __init__(self) -> None:
        self.hosts: set[str] = set()
        self.users: set[str] = set()
        self.schemas: set[str] = set()
        self.literals = 0
        self.statements = 0

    def add_processlist(self, frame: pd.DataFrame) -> None:
        """Add the sessions of one processlist frame (any number of snapshots); a
        performance_schema.threads frame (``processlist_user`` ...) is read the same way."""
        frame = frame.rename(columns={f"processlist_{c}": c for c in ("user", "host", "db", "info")})
        for column, into in (("user", self.users), ("db", self.schemas)):
            if column in frame:
                into.update(str(v) for v in frame[column].dropna().unique())
        if "host" in frame:
            self.hosts.update(host_of(str(v)) for v in frame["host"].dropna().unique())
        if "info" in frame:
            counts = frame["info"].dropna().astype(str).value_counts()
            for sql, n in counts.items():
                if sql != "NULL":
                    self.literals += count_literals(sql) * int(n)
                    self.statements += int(n)

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(
            hosts=sorted(h for h in self.hosts if h not in LOOPBACK_HOSTS),
            users=sorted(u for u in self.users if u and u not in BUILTIN_USERS),
            schemas=sorted(s for s in self.schemas if s and s not in BUILTIN_SCHEMAS),
            literals=self.literals,
            statements=self.statements,
        )


def host_of(value: str) -> str:
    """A processlist ``Host`` without its client port: ``10.0.0.5:41234`` -> ``10.0.0.5``,
    ``[::1]:3306`` -> ``::1``.

    >>> host_of("app1.example.com:50928"), host_of("localhost"), host_of("[fe80::1]:3306")
    ('app1.example.com', 'localhost', 'fe80::1')
    """
    value = value.strip()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return _PORT.sub("", value)
    return value


class Redactor:
    """Redacts strings and JSON-like values for one link (see the module docstring).

    ``choices``: what the link redacts; ``vocabulary``: the case's values; ``key``: bytes that make
    the pseudonyms of unknown IPv4 addresses the link's own (e.g. the link's id and a secret).
    """

    def __init__(self, choices: Choices, vocabulary: Vocabulary, key: bytes = b"") -> None:
        self.choices = choices
        self.vocabulary = vocabulary
        self.key = key
        self.names: dict[str, str] = {}  # value (hosts lower-cased) -> pseudonym
        folded: list[str] = []  # host names: matched whatever their case
        exact: list[str] = []
        for enabled, prefix, values, fold in (
            (choices.hosts, "host", vocabulary.hosts, True),
            (choices.users, "user", vocabulary.users, False),
            (choices.schemas, "db", vocabulary.schemas, False),
        ):
            if not enabled:
                continue
            for i, value in enumerate(sorted(set(values)), start=1):
                key_ = value.lower() if fold else value
                if key_ and key_ not in self.names:
                    self.names[key_] = f"{prefix}-{i}"
                    (folded if fold else exact).append(key_)
        parts = ([f"(?i:{_trie(folded)})"] if folded else []) + ([_trie(exact)] if exact else [])
        self._known = re.compile(f"{_BEFORE}(?:{'|'.join(parts)}){_AFTER}") if parts else None
        self._folded, self._exact = sorted(folded), sorted(exact)

    # ------------------------------------------------------------------ strings
    def _name(self, match: re.Match[str]) -> str:
        value = match.group(0)
        return self.names.get(value) or self.names.get(value.lower()) or value

    def _cut(self, match: re.Match[str]) -> str:
        """A token at the end of a text or before ``…`` or ``'`` (where a label, an evidence value or a
        statement was cut to a length) that begins a known value: what is left of a value, as ``?``."""
        token = match.group(0)
        if match.start() < MIN_CUT_AT and not match.string.startswith("…", match.end()):
            return token  # a short text ending in a word was not cut: "case", "the app"
        for values, probe in ((self._folded, token.lower()), (self._exact, token)):
            i = bisect.bisect_left(values, probe)
            if i < len(values) and values[i] != probe and values[i].startswith(probe):
                return "?"
        return token

    def _ip(self, match: re.Match[str]) -> str:
        ip = match.group(0)
        known = self.names.get(ip)
        if known:
            return known
        if ip in LOOPBACK_HOSTS:
            return ip
        return "host-" + hmac.new(self.key, ip.encode(), hashlib.sha256).hexdigest()[:6]

    def text(self, value: str) -> str:
        """``value`` with every known host, user and schema (as the link chose) replaced by its
        pseudonym, and, when hosts are redacted, every other IPv4 address by a keyed one."""
        if self._known is not None:
            value = self._known.sub(self._name, value)
            if "…" in value or "'" in value or value[-1:].isalnum() or value[-1:] in "_$.-":
                value = _CUT.sub(self._cut, value)
        if self.choices.hosts:
            value = _IPV4.sub(self._ip, value)
        return value

    def sql(self, statement: str | None, *, cut: bool = False) -> str | None:
        """A statement as the link shows it: its fingerprint when literals are redacted (a
        statement cut before a closing quote loses everything from that quote), then ``text``.
        ``cut``: the statement was cut to a length (it then ends with ``…``, and what is left of a
        value at its end is redacted too)."""
        if statement is None:
            return None
        if self.choices.literals and statement.strip().upper() != "NULL":
            statement = scrub_sql(statement)
        return self.text(statement + "…" if cut else statement)

    # ------------------------------------------------------------------ structures
    def walk(self, value: object) -> object:
        """A JSON-like value (dicts, lists, strings, numbers) with every string value through
        ``text``. Dict keys are the structure (field names a page or a script reads) and are kept:
        a caller whose keys are data (labels used as keys) redacts them itself. Numbers and None
        are returned as they are."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            if value and not isinstance(value[0], str | dict | list | tuple):
                if all(not isinstance(v, str | dict | list | tuple) for v in value):
                    return list(value)  # a row of numbers (chart points): nothing to redact
            return [self.walk(v) for v in value]
        return value

    def raw_lines(self, fmt: str, lines: list[str]) -> list[str]:
        """One sample's raw lines of a member of format ``fmt``: statement text of a processlist
        replaced by fingerprints (when literals are redacted; see ``processlist_lines``), then every
        line through ``text``."""
        if fmt in STATEMENT_FORMATS and self.choices.literals:
            lines = processlist_lines(lines)
        return [self.text(line) for line in lines]

    def report(self) -> dict[str, object]:
        """What the link replaces in this case: counts by kind (None for a kind not chosen)."""
        v, c = self.vocabulary, self.choices
        return {
            "literals": v.literals if c.literals else None,
            "statements": v.statements if c.literals else None,
            "hosts": len(v.hosts) if c.hosts else None,
            "users": len(v.users) if c.users else None,
            "schemas": len(v.schemas) if c.schemas else None,
        }


def _trie(values: list[str]) -> str:
    """One regex matching any of ``values`` (non-empty), built as a trie: a thousand host names are
    tried in one pass over a string instead of one alternative after another. A longer value is
    tried before its prefix (``app1`` before ``app``).

    >>> _trie(["app", "app1", "db"])
    '(?:app(?:1)?|db)'
    """
    root: dict[str, dict] = {}
    for value in values:
        node = root
        for ch in value:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return build(root)


def scrub_sql(statement: str) -> str:
    """A statement's fingerprint; what is left from an unclosed quote on (a statement cut in the
    middle of a string) becomes one ``?``.

    >>> scrub_sql("UPDATE stock SET qty = qty - 1 WHERE sku = 'A-1'")
    'update stock set qty = qty - ? where sku = ?'
    >>> scrub_sql("SELECT * FROM t WHERE note = 'cut in the mid")
    'select * from t where note = ?'
    """
    return _UNCLOSED_QUOTE.sub("?", fingerprint(statement))


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


def processlist_lines(lines: Iterable[str]) -> list[str]:
    """Raw lines of a processlist with every statement replaced by its fingerprint, line for line
    (a multi-line statement's fingerprint on its first line, its other lines left empty).

    The ``Info`` of ``\\G`` output, the cells from ``Info`` on of a table or ``-B`` row, and any
    line that is not a marker, a row separator, a border or a ``Field: value`` line (the lines of
    a statement that spans several) make a statement.

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
                out[start] = head + scrub_sql(sql)
            pending = None

    for line in lines:
        field_ = _FIELD.match(line)
        if _is_structure(line) or (field_ and field_.group(2) not in INFO_FIELDS):
            flush()
            out.append(line)
            continue
        if field_:  # Info: starts a statement
            flush()
            head, pending, start, orphan = line[: field_.start(3)], [field_.group(3)], len(out), False
            out.append(line)
            continue
        cells = _cells(line)
        if cells and len(cells[1]) > _INFO_COLUMN + (cells[0] == "|"):
            flush()
            sep, parts = cells
            at = _INFO_COLUMN + (sep == "|")  # a table row starts with an empty cell before its first |
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
