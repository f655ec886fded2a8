"""Redaction of what a shared link serves: query literals, hosts, MySQL users and schemas, passwords.

A case is stored as captured; what a customer's link shows is redacted when it is served, with the
choices of that link (:class:`Choices`). :class:`Redactor` takes the values a case holds (its
:class:`Vocabulary`: client hosts, users and schemas collected from every member's declared fields
by :class:`VocabularyBuilder` and web/sharing/redaction/formats.py, and the server's own names,
``server_names``) and gives each one a
pseudonym that is the same everywhere on the link: ``host-1``, ``user-2``, ``db-3``, ``server-1``
(numbered in sorted order of the values, so every response of the link agrees without state).

- **Literals** (web/sharing/redaction/literals.py): statement text becomes its fingerprint
  (``analyzer.statements.fingerprint``: strings and numbers -> ``?``), in every text a statement quoted in it
  (``statements_in_text``); each format's raw lines as its parser declares them (formats.py).
- **Hosts, users, schemas**: each known value, as a whole token (not inside a longer name:
  ``app`` is not replaced in ``app1`` or ``application``), is replaced in every string served:
  page text, chart labels, moment rows, raw lines, JSON and CSV cells. Hosts also lose their
  ``:port``-less form's case (DNS names are case-insensitive). A value glued to a client's short
  option is a token too (``mysql -uacme -hdb1.acme.io -Dshop``).
- **The server's own names** (with hosts): the case's host, the host a capture names in its header
  (sysstat banners, a ``hostname`` member, the collector's manifest, ``hostname``, ``report_host`` and
  ``wsrep_node_name`` of the variables, the nodes of ``wsrep_cluster_address``) and the replication
  source of SHOW SLAVE STATUS (``Master_Host``: its binary logs are named after it), each with its
  short form (``db1`` of ``db1.acme.io``): ``server-N``, one per short name. MySQL builds file names from
  the host name (``db1-slow.log``, ``db1-relay-bin.000002``, ``db1.err``), and collectors put it in
  directory and archive names (``casebook-db1-20260421T165141``): a server name is a token that no
  letter or digit touches (``-``, ``_`` and ``.`` end it). Names that are words of every MySQL
  server (``GENERIC_SERVER_NAMES``: ``mysql``, ``localhost`` ...) and names of fewer than
  ``MIN_SERVER_NAME`` characters are kept: they tell nothing, and replacing them would garble the
  page (the schema ``mysql``, the processlist field ``db``).
- **Addresses** (with hosts): any IPv4 address that is not a known host gets a keyed pseudonym
  ``host-<6 hex>`` (the same on the whole link); so does any IPv6 address (full, compressed, with a
  zone ``%eth0``, in brackets with a port, or as MySQL and netstat write it, ``addr:port``).
  An IPv4-mapped address (``::ffff:10.0.0.5``) gets its IPv4 address's pseudonym. Only what is an
  address beyond doubt is taken: with ``::`` it holds a digit (``std::map`` and ``dead::beef`` are
  names), without ``::`` it has eight groups, one of three or four digits (a time ``12:34:56``, a
  MAC ``00:1a:2b:3c:4d:5e`` or a WWN ``21:00:00:24:ff:4c:a8:5e`` is not an address).
- Built-in accounts and schemas (``root``, ``system user``, ``event_scheduler``, ``mysql``,
  ``information_schema``, ``performance_schema``, ``sys``) and loopback and unspecified addresses
  (``127.0.0.1``, ``::1``, ``::``) are the same on every server and are kept.
- **Passwords** (``mask_secrets``, parsers/passwords.py, which lists the forms): always masked,
  whatever the link's choices, as everywhere a case is shown (a password is never something for a
  customer's other readers, nor for the engineer's page to show).

Pure Python (and pandas for the builder): no Django. Replacement goes the safe way: a value is also
replaced where it happens to be a word of prose (a schema named ``orders`` in "orders table").
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from parsers.passwords import mask_secrets
from parsers.vocabulary import tokens
from web.sharing.redaction.allowlist import (
    CLOSE,
    casebook_words,
    outside,
    protect,
    rebuild,
    strip_marks,
    unmarked,
)
from web.sharing.redaction.literals import count_literals, is_statement, scrub_sql, statements_in_text

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
#: Server names that are words of every MySQL server or Linux box (a schema, binaries, replication
#: roles, loopback names): a server called so tells nothing, and replacing the word would garble the
#: page (``/var/lib/mysql``, ``mysql.user``, ``Master_Host``). Compared case-insensitively.
GENERIC_SERVER_NAMES = frozenset(
    {
        "localhost", "localhost.localdomain", "localhost6", "localdomain", "mysql", "mysqld", "mariadb",
        "mariadbd", "server", "host", "hostname", "node", "database", "master", "slave", "source",
        "replica", "primary", "secondary", "linux", "none",
    }
)  # fmt: skip
#: Shorter server names are kept: ``db`` is also the processlist's schema field, ``h1`` a heading.
MIN_SERVER_NAME = 3
#: A host name as a capture writes it (letters, digits, ``-``, ``_``, dots between labels), or an
#: IPv4 address: what ``server_names`` takes from the capture's headers and variables.
_HOST_NAME = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*"
)
#: A value glued to a client's short option: ``mysql -uacme -hdb1.acme.io -Dshop`` is redacted as a
#: token of its own.
_GLUED = re.compile(r"(?<=\s-[uhD])[^\s'\"]+")
#: Where a server name ends: no letter or digit next to it (``db1-slow.log``, ``casebook-db1-2026``).
_SERVER_BEFORE = r"(?<![A-Za-z0-9$])"
_SERVER_AFTER = r"(?![A-Za-z0-9$])"
#: Whole-token boundaries: a value is not replaced inside a longer name (``app`` in ``app1``,
#: ``web`` in ``web-01``); dots, quotes, backticks, ``@``, ``:`` and spaces end a token.
_BEFORE = r"(?<![\w$-])"
_AFTER = r"(?![\w$-])"
_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w]|\.\d)"
)
#: An IPv6 candidate: hex groups and colons (two colons among the first groups), an optional dotted
#: IPv4 tail, zone and ``:port``, not inside a word, a dotted name or a longer colon run. What it finds
#: is checked by ``_ipv6_of`` (times and MAC addresses are found here and left there).
_IPV6 = re.compile(
    r"(?<![\w.:%-])(?=[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:]+"
    r"(?:\.\d{1,3}\.\d{1,3}\.\d{1,3})?(?:%[\w.-]+)?(?::\d{1,5})?(?![\w:]|\.\d)"
)
#: Groups of a full (uncompressed) IPv6 address: 8, or 7 with a dotted IPv4 tail.
_IPV6_GROUPS = 8
#: A full IPv6 address has a group of at least this many digits (MAC addresses, WWNs and times have
#: groups of two).
_IPV6_WIDE_GROUP = 3
MASK = "***"
#: Texts are cut to 80 characters or more (chart labels 80, evidence 200-500, statements 2,000):
#: a word ending a shorter text, with no ``…`` after it, is whole.
MIN_CUT_AT = 60
#: A token where texts are cut (at the end, before an ellipsis or a closing quote): checked for the
#: beginning of a known value (``acme_bil…`` of ``acme_billing``).
_CUT = re.compile("(?<![\\w$.-])[\\w$.-]{3,}(?=\ue001*(?:…|'|\\Z))")
_PORT = re.compile(r":\d+\Z")
#: A pseudonym's shape: ``host-1``, ``user-2``, ``db-3``, ``server-1``, a keyed ``host-3f9a1c``.
_PSEUDONYM = re.compile(r"(?<![\w-])(?:host|user|db|server)-(?:\d+|[0-9a-f]{6})(?![\w-])")
_KEYED = re.compile(r"host-[0-9a-f]{6}")
#: What a vocabulary is collected by: one collected by an older Casebook (2: the server's names and
#: the replication source's host; 3: every host of a case of several; 4: every format's declared
#: fields) is collected again.
VOCABULARY_VERSION = 4


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
    (every session snapshot counted), ``statements``: session snapshots with a statement;
    ``servers``: the server's own names (``server_names``; redacted with the hosts)."""

    hosts: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    schemas: list[str] = field(default_factory=list)
    literals: int = 0
    statements: int = 0
    servers: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "version": VOCABULARY_VERSION,
            "hosts": self.hosts,
            "users": self.users,
            "schemas": self.schemas,
            "literals": self.literals,
            "statements": self.statements,
            "servers": self.servers,
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
            servers=list(data.get("servers", [])),
        )


class VocabularyBuilder:
    """Collects a :class:`Vocabulary`, one piece of a capture at a time: what each format declares
    (web/sharing/redaction/formats.py ``collect``) goes into ``users``, ``hosts`` (without port) and
    ``schemas``; statements are counted by ``add_statements``; the server's names by ``add_servers``."""

    def __init__(self) -> None:
        self.hosts: set[str] = set()
        self.users: set[str] = set()
        self.schemas: set[str] = set()
        self.literals = 0
        self.statements = 0
        self.servers: set[str] = set()

    def add_servers(self, names: Iterable[str]) -> None:
        """Add the server's own names (``server_names``)."""
        self.servers.update(names)

    def add_source_hosts(self, hosts: Iterable[object]) -> None:
        """A replica's source (SHOW SLAVE STATUS ``Master_Host``) is a server of the case: its
        binary logs are named after it (``db-src-3-bin.000042``)."""
        self.servers.update(server_names(None, ({"host": str(v)} for v in hosts)))

    def add_statements(self, statements: pd.Series) -> None:
        """Count the statements of one declared column and the literals they hold."""
        counts = statements.dropna().astype(str).value_counts()
        for sql, n in counts.items():
            if sql.strip() and sql != "NULL":
                self.literals += count_literals(sql) * int(n)
                self.statements += int(n)

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(
            hosts=sorted(h for h in self.hosts if h not in LOOPBACK_HOSTS),
            users=sorted(u for u in self.users if u and u not in BUILTIN_USERS),
            schemas=sorted(s for s in self.schemas if s and s not in BUILTIN_SCHEMAS),
            literals=self.literals,
            statements=self.statements,
            servers=sorted(self.servers),
        )


def host_of(value: str) -> str:
    """A processlist ``Host`` without its client port: ``10.0.0.5:41234`` -> ``10.0.0.5``,
    ``[::1]:3306`` -> ``::1``; MySQL writes an IPv6 client as ``address:port`` without brackets
    (``2001:db8::5:53412``, ``::ffff:10.0.0.5:53412``): the last group is taken for the port when it
    is decimal and what is before it is an address; an IPv4-mapped address is its IPv4 client.

    >>> host_of("app1.example.com:50928"), host_of("localhost"), host_of("[fe80::1]:3306")
    ('app1.example.com', 'localhost', 'fe80::1')
    >>> host_of("2001:db8::5:53412"), host_of("::ffff:10.0.0.5:40022"), host_of("fe80::1%eth0")
    ('2001:db8::5', '10.0.0.5', 'fe80::1%eth0')
    """
    value = value.strip()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return _PORT.sub("", value)
    address = _parse_ipv6(value)
    head, _, port = value.rpartition(":")
    if port.isdigit() and "%" not in value and _parse_ipv6(head) is not None:
        address = _parse_ipv6(head)
        value = head
    if address is not None and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)  # an IPv4 client of a server listening on IPv6
    return value


def _parse_ipv6(text: str) -> ipaddress.IPv6Address | None:
    """``text`` (no zone, no port) as an IPv6 address when it is one beyond doubt (see the module
    docstring), else None."""
    if "::" in text:
        if not any(c.isdigit() for c in text):
            return None  # std::map, dead::beef: names; "::" alone: the unspecified address, kept
    else:
        groups = text.split(":")
        if len(groups) != _IPV6_GROUPS - ("." in groups[-1]) or not any(
            len(g) >= _IPV6_WIDE_GROUP for g in groups
        ):
            return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def _ipv6_of(token: str) -> tuple[ipaddress.IPv6Address, str] | None:
    """What ``_IPV6`` found, as (address, what follows it and stays: ``:port``), or None when it is
    not an address. The zone (``%eth0``) goes with the address; a last decimal group is taken for a
    port only when the whole is not an address (``::ffff:10.0.0.5:3306``, ``2001:db8::5:53412``)."""
    body, zoned, zone = token.partition("%")
    if zoned:
        _, colon, port = zone.partition(":")
        address = _parse_ipv6(body)
        return (address, colon + port) if address is not None else None
    address = _parse_ipv6(body)
    if address is not None:
        return address, ""
    head, _, port = body.rpartition(":")
    if head and port.isdigit():
        address = _parse_ipv6(head)
        if address is not None:
            return address, ":" + port
    return None


def server_names(
    host: str | None, metas: Iterable[dict[str, object]], hosts: Iterable[str] = ()
) -> list[str]:
    """The servers' own names in a case, sorted, lower-cased, without duplicates: ``host`` (the
    case's, from the manifest or a ``hostname`` member), ``hosts`` (the name of every host of a case
    of several: ``Host.name``, ``Source.host``, a finding's hosts; ``host`` is then those names joined
    by ", ", which is no host name) and, from each source's ``meta``, ``host``
    (a sysstat banner, a ``hostname`` member), ``pdsh_host``, ``hostname`` and ``report_host`` (MySQL
    Shell's ``.instance`` file), the manifest's ``hostname``, and the
    variables' ``hostname``, ``report_host``, ``wsrep_node_name`` and the nodes of
    ``wsrep_cluster_address`` (``gcomm://db1,db2:4567``). Values that are not host names or IPv4
    addresses are skipped.

    >>> server_names("DB1.acme.io", [{"host": "db1"}, {"variables": {"hostname": "db1.acme.io",
    ...     "wsrep_cluster_address": "gcomm://db2.acme.io:4567,db3"}}, {"host": "(none)"}])
    ['db1', 'db1.acme.io', 'db2.acme.io', 'db3']
    >>> server_names("db-a, db-b", [], hosts=["db-a", "db-b", "db2_3306"])
    ['db-a', 'db-b', 'db2_3306']
    """
    found = [host, *hosts]
    for meta in metas:
        found += [meta.get(k) for k in ("host", "pdsh_host", "hostname", "report_host")]
        manifest = meta.get("manifest")
        if isinstance(manifest, dict):
            found.append(manifest.get("hostname"))
        variables = meta.get("variables")
        if isinstance(variables, dict):
            found += [variables.get(k) for k in ("hostname", "report_host", "wsrep_node_name")]
            cluster = str(variables.get("wsrep_cluster_address") or "")
            if cluster.startswith("gcomm://"):
                found += [node.rsplit(":", 1)[0] for node in cluster[8:].split(",")]
    names = set()
    for value in found:
        value = str(value or "").strip().rstrip(".")
        if _HOST_NAME.fullmatch(value):
            names.add(value.lower())
    return sorted(names)


class Redactor:
    """Redacts strings and JSON-like values for one link (see the module docstring).

    ``choices``: what the link redacts; ``vocabulary``: the case's values; ``key``: bytes that make
    the pseudonyms of unknown IP addresses the link's own (e.g. the link's id and a secret).
    Passwords are masked whatever the choices (``mask_secrets``).
    """

    def __init__(self, choices: Choices, vocabulary: Vocabulary, key: bytes = b"") -> None:
        self.choices = choices
        self.vocabulary = vocabulary
        self.key = key
        self.names: dict[str, str] = {}  # value (hosts lower-cased) -> pseudonym
        folded: list[str] = []  # host names: matched whatever their case
        exact: list[str] = []
        servers = _server_groups(vocabulary.servers) if choices.hosts else {}
        for i, short in enumerate(sorted(servers), start=1):
            for name in servers[short]:
                self.names[name] = f"server-{i}"
        hosts = [h for h in vocabulary.hosts if h.lower() not in self.names]
        for enabled, prefix, values, fold in (
            (choices.hosts, "host", hosts, True),
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
            if prefix == "host":  # an IPv6 host also under its canonical spelling
                for value in values:
                    address = _parse_ipv6(value.split("%")[0])
                    if address is not None and value.lower() in self.names:
                        self.names.setdefault(str(address), self.names[value.lower()])
        self.counts = {"hosts": len(set(folded)), "servers": len(servers)}
        self.pseudonyms = frozenset(self.names.values())
        server_names_ = sorted({n for names in servers.values() for n in names})
        parts = ([f"(?i:{_trie(folded)})"] if folded else []) + ([_trie(exact)] if exact else [])
        known = [f"{_BEFORE}(?:{'|'.join(parts)}){_AFTER}"] if parts else []
        # A known value first: at one place, a client host "db1.acme.io" wins over the server "db1".
        known += [f"{_SERVER_BEFORE}(?i:{_trie(server_names_)}){_SERVER_AFTER}"] if server_names_ else []
        self._known = re.compile("|".join(known)) if known else None
        self._folded, self._exact = sorted({*folded, *server_names_}), sorted(exact)
        # The values of the kinds this link does not redact are shown: their words are safe here.
        kept = [
            *([] if choices.users else vocabulary.users),
            *([] if choices.schemas else vocabulary.schemas),
            *([] if choices.hosts else [*vocabulary.hosts, *vocabulary.servers]),
        ]
        self.kept_words = frozenset(t.lower() for value in kept for t in tokens(value))
        self._words: dict[frozenset[str] | None, frozenset[str]] = {}

    # ------------------------------------------------------------------ strings
    def _name(self, match: re.Match[str]) -> str:
        value = match.group(0)
        found = self.names.get(value) or self.names.get(value.lower())
        return protect(found) if found else value

    def _cut(self, match: re.Match[str]) -> str:
        """A token at the end of a text or before ``…`` or ``'`` (where a label, an evidence value or a
        statement was cut to a length) that begins a known value: what is left of a value, as ``?``."""
        token = match.group(0)
        if match.start() < MIN_CUT_AT and not match.string[match.end() :].lstrip(CLOSE).startswith("…"):
            return token  # a short text ending in a word was not cut: "case", "the app"
        for values, probe in ((self._folded, token.lower()), (self._exact, token)):
            i = bisect.bisect_left(values, probe)
            if i < len(values) and values[i] != probe and values[i].startswith(probe):
                return "?"
        return token

    def _keyed(self, address: str) -> str:
        """The link's own pseudonym of an address that is not a known host."""
        return "host-" + hmac.new(self.key, address.encode(), hashlib.sha256).hexdigest()[:6]

    def _ip(self, match: re.Match[str]) -> str:
        ip = match.group(0)
        known = self.names.get(ip)
        if known:
            return protect(known)
        if ip in LOOPBACK_HOSTS:
            return ip
        return protect(self._keyed(ip))

    def _ip6(self, match: re.Match[str]) -> str:
        token = match.group(0)
        found = _ipv6_of(token)
        if found is None:
            return token
        if (
            token.lower() in self.names
        ):  # a client collected with its port (a link made before ports were cut)
            return protect(self.names[token.lower()])
        address, rest = found
        mapped = address.ipv4_mapped
        if address.is_loopback or address.is_unspecified or (mapped is not None and mapped.is_loopback):
            return token
        key = str(mapped if mapped is not None else address)  # a mapped address is its IPv4 host
        written = token[: len(token) - len(rest)].lower()
        return (
            protect(
                self.names.get(written)
                or self.names.get(str(address))
                or self.names.get(key)
                or self._keyed(key)
            )
            + rest
        )

    def text(self, value: str) -> str:
        """``value`` as the link serves it (``line`` with Casebook's own words and every format's:
        the vocabulary of a finding, the verdict, a chart label, a source)."""
        return self.line(value, None)

    def line(self, value: str, words: frozenset[str] | None) -> str:
        """``value`` with every password masked (``mask_secrets``), every known host, server name,
        user and schema (as the link chose) replaced by its pseudonym, and, when hosts are
        redacted, every other IPv6 and IPv4 address by a keyed one; when literals are redacted,
        every statement it quotes as its fingerprint (``statements_in_text``). On a link that
        redacts anything, the result is rebuilt from tokens proven safe (allowlist.py): numbers,
        punctuation, the fingerprints and pseudonyms written here, and ``words`` (None: Casebook's
        own words and every format's, ``casebook_words``); any other word becomes ``?``.

        ``value`` may hold spans marked with ``allowlist.protect`` by the caller (a raw line's
        statement fingerprints); a capture's own text must have gone through ``clean`` first."""
        value = self._replaced(value)
        if not self.choices.any:
            return strip_marks(value)
        return rebuild(value, self._allowed(words))

    def _allowed(self, words: frozenset[str] | None) -> frozenset[str]:
        """``words`` (None: ``casebook_words``) with the words of the values this link shows."""
        found = self._words.get(words)
        if found is None:
            found = self._words[words] = (casebook_words() if words is None else words) | self.kept_words
        return found

    def pseudonymised(self, value: str) -> str:
        """``text`` before it is rebuilt from safe tokens: passwords masked, statements as
        fingerprints and known values as pseudonyms, every other word as it is."""
        return strip_marks(self._replaced(value))

    def _replaced(self, value: str) -> str:
        value = mask_secrets(value)
        if self.choices.literals:
            value = outside(value, self._statements)
        if " -" in value:
            value = _GLUED.sub(self._glued, value)
        return self._names(value)

    def clean(self, value: object) -> object:
        """A JSON-like value taken from a case with every mark character in its strings as ``?``
        (``allowlist.unmarked``): what a capture holds is never taken for the redaction's own text."""
        if isinstance(value, str):
            return unmarked(value)
        if isinstance(value, dict):
            return {k: self.clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.clean(v) for v in value]
        return value

    def _statements(self, text: str) -> str:
        """``statements_in_text`` with each fingerprint marked as the redaction's own; a pseudonym
        this link wrote (a text redacted twice: ``from db-1.t``) stays one, not ``db-?t``."""
        hidden: dict[str, str] = {}

        def hide(match: re.Match[str]) -> str:
            name = match.group(0)
            if name not in self.pseudonyms and not _KEYED.fullmatch(name):
                return name
            key = "qqcasebookpseudonym" + "".join(chr(97 + int(d)) for d in str(len(hidden)))
            hidden[key] = name
            return key

        if "-" in text:
            text = _PSEUDONYM.sub(hide, text)
        text = statements_in_text(text, wrap=protect)
        for key, name in hidden.items():
            text = text.replace(key, name)
        return text

    def _glued(self, match: re.Match[str]) -> str:
        return self._names(match.group(0))

    def _names(self, value: str) -> str:
        """``text`` but for passwords and values glued to an option."""
        if self.choices.hosts and ("::" in value or value.count(":") >= _IPV6_GROUPS - 1):
            value = _IPV6.sub(self._ip6, value)
        if self._known is not None:
            value = self._known.sub(self._name, value)
            end = value.rstrip(CLOSE)[-1:]
            if "…" in value or "'" in value or end.isalnum() or end in "_$.-":
                value = _CUT.sub(self._cut, value)
        if self.choices.hosts:
            value = _IPV4.sub(self._ip, value)
        return value

    def sql(self, statement: str | None, *, cut: bool = False) -> str | None:
        """A statement as the link shows it: its fingerprint when literals are redacted (a
        statement cut before a closing quote loses everything from that quote), then ``text``.
        ``cut``: the statement was cut to a length (it then ends with ``…``, and what is left of a
        value at its end is redacted too)."""
        marked = self.marked_sql(statement, cut=cut)
        return None if marked is None else self.text(marked)

    def marked_sql(self, statement: str | None, *, cut: bool = False) -> str | None:
        """``sql`` before ``text``: the fingerprint marked as the redaction's own (``protect``), for a
        value the link's ``walk`` takes through ``text`` afterwards (once: a fingerprint whose
        schema already has its pseudonym, ``db-1.t``, is not fingerprinted again into ``db-?t``)."""
        if statement is None:
            return None
        if self.choices.literals and statement.strip().upper() != "NULL":
            statement = scrub_sql(statement)
            statement = protect(statement) if is_statement(statement) else statement
        return statement + "…" if cut else statement

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

    def report(self) -> dict[str, object]:
        """What the link replaces in this case: counts by kind (None for a kind not chosen);
        ``servers``: the server's names (short names, with the hosts)."""
        v, c = self.vocabulary, self.choices
        return {
            "literals": v.literals if c.literals else None,
            "statements": v.statements if c.literals else None,
            "hosts": self.counts["hosts"] if c.hosts else None,
            "servers": self.counts["servers"] if c.hosts else None,
            "users": len(v.users) if c.users else None,
            "schemas": len(v.schemas) if c.schemas else None,
        }


def _server_groups(names: Iterable[str]) -> dict[str, set[str]]:
    """The server's names by short name (the first label; an IPv4 address is its own): each group
    gets one pseudonym. Generic and short names are left out (``GENERIC_SERVER_NAMES``).

    >>> sorted((k, sorted(v)) for k, v in _server_groups(["db1.acme.io", "DB1", "mysql", "10.0.0.9"]).items())
    [('10.0.0.9', ['10.0.0.9']), ('db1', ['db1', 'db1.acme.io'])]
    """
    groups: dict[str, set[str]] = {}
    for name in names:
        name = name.strip().lower()
        if not _telling(name):
            continue
        short = name if _IPV4.fullmatch(name) else name.split(".")[0]
        group = groups.setdefault(short if _telling(short) else name, set())
        group.update({name, short} if _telling(short) else {name})
    return groups


def _telling(name: str) -> bool:
    """A server name that says something about the customer (see ``GENERIC_SERVER_NAMES``)."""
    return len(name) >= MIN_SERVER_NAME and name not in GENERIC_SERVER_NAMES and name not in LOOPBACK_HOSTS


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
