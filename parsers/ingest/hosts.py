"""Which host each member of a bundle belongs to, read from the captures themselves.

A case holds one or more servers: a cluster's nodes in one tarball (a directory per host of pt-stalk
collections), a MySQL Shell ``collectDiagnostics`` zip of every member, or one bundle per host
added to the same case. ``assign`` gives every parsed member (``ParsedSource.member``) a host name
and the reason it was chosen, trying these clues in order, the first that names a host wins:

0. the member's own content, where its parser put the host in ``meta["host"]`` with the reason in
   ``meta["host_origin"]`` (MySQL Shell's ``<instance_id>.`` prefix and ``.instance`` file);
1. pt-stalk's ``<prefix>-hostname`` of the member's own collection (same directory and prefix);
2. the ``hostname`` (else ``report_host``) variable read in the member's own collection;
3. the collector's ``manifest.txt`` (``hostname:``) in the member's directory or one above it;
4. a pt-stalk ``-hostname`` of another collection in the same directory;
5. the member's sysstat banner (``Linux 6.1.0 (db-b) ...``, ``meta["host"]`` without an origin);
6. OSWatcher's archive name ``<host>_<tool>_YY.MM.DD.HHMM.dat``;
7. the directory layout: when a bundle holds pt-stalk collections under two or more directories
   side by side, each directory is a host (``db-a/``, ``db-b/``), named after it;
8. the first host named in the same bundle; else, for a bundle added to a case, its file name; else
   ``UNKNOWN_HOST`` (a one-host bundle that names no host).

Names are compared case-insensitively on their first label (``db1`` and ``db1.example.com`` are one
host), and kept as first written. A banner that names another host than the one its collection
(rank 1-4) places it on is a capture of another server; ``banner_mismatches`` lists them.

Plain Python, no Django, no I/O: ``ParsedSource`` objects in, names and reasons out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from parsers.base import ParsedSource
from parsers.layout import place

#: The host of a one-host bundle that names no host anywhere (``Host.name`` is never empty).
UNKNOWN_HOST = "host"
#: Characters a host name may have (names come from uploads and are shown in pages).
HOST_CHARS = re.compile(r"[^A-Za-z0-9._:-]")
#: OSWatcher's archive file name: ``<host>_<tool>_YY.MM.DD.HHMM.dat`` (maybe compressed).
OSWATCHER_ARCHIVE = re.compile(r"^(?P<host>.+)_[a-z]+_\d{2}\.\d{2}\.\d{2}\.\d{4}\.dat(?:\.\w+)?$")
IPV4 = re.compile(r"^\d+(?:\.\d+){3}$")
#: Longest reason kept (``Source.host_reason``).
MAX_REASON = 300
#: Hosts a case holds at most: a cluster's nodes with room to spare. Each host is a timeline and a
#: run of every rule, so a hostile bundle naming thousands of hosts must not make thousands; the
#: members of further hosts are placed on their bundle's host (else the first), with the reason.
MAX_HOSTS = 64


def clean_host(value: str | None) -> str | None:
    """A host name reduced to safe characters (at most 255), or None when nothing is left."""
    if not value:
        return None
    cleaned = HOST_CHARS.sub("", str(value).strip())[:255]
    return cleaned or None


def host_key(name: str) -> str:
    """The name two spellings of one host share: lower case, first label (an IPv4 address whole),
    and a port when the name has one (``host:3310`` and ``host:3320``, two servers of one machine as
    MySQL Shell names sandbox instances, stay two).

    >>> host_key("DB1.example.com"), host_key("db1"), host_key("10.0.0.7")
    ('db1', 'db1', '10.0.0.7')
    >>> host_key("127.0.0.1:3310"), host_key("db1.example.com:3320"), host_key("::1")
    ('127.0.0.1:3310', 'db1:3320', '::1')
    """
    low = name.lower()
    host, sep, port = low.rpartition(":") if low.count(":") == 1 else ("", "", low)
    if not sep:
        host, port = low, ""
    key = host if IPV4.match(host) or ":" in host else host.split(".")[0]
    return f"{key}:{port}" if sep else key


@dataclass(slots=True)
class Assignment:
    """``host_of``: member -> (host name, reason); ``hosts``: (name, how it was found) of every host,
    in the order of their first member; ``placeholder``: the one host was named by nothing."""

    host_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    hosts: list[tuple[str, str]] = field(default_factory=list)
    placeholder: bool = False
    #: members whose host would have been one more than ``MAX_HOSTS``
    overflow: list[str] = field(default_factory=list)

    def members(self, host: str) -> list[str]:
        return [m for m, (h, _) in self.host_of.items() if h == host]


def _where(member: str) -> tuple[str, str | None]:
    """(directory, pt-stalk prefix or None) of a member."""
    return posixpath.dirname(member), place(member).prefix


def _variables_host(source: ParsedSource) -> tuple[str, str] | None:
    found = source.meta.get("variables")
    if not isinstance(found, dict):
        return None
    lowered = {str(k).lower(): v for k, v in found.items()}
    for name in ("hostname", "report_host"):
        host = clean_host(str(lowered.get(name) or ""))
        if host:
            return host, name
    return None


def _bundle_of(member: str, prefixes: Sequence[str]) -> int:
    """Index of the bundle a member came from (0: the first; ``prefixes[i]`` starts bundle i's members)."""
    for i, prefix in enumerate(prefixes):
        if i and prefix and member.startswith(prefix):
            return i
    return 0


def _host_dirs(sources: Sequence[ParsedSource], prefixes: Sequence[str]) -> dict[str, str]:
    """member -> the directory that names its host, where a bundle holds pt-stalk collections under
    two or more sibling directories (rank 7)."""
    by_bundle: dict[int, list[str]] = {}
    for s in sources:
        by_bundle.setdefault(_bundle_of(s.member, prefixes), []).append(s.member)
    out: dict[str, str] = {}
    for index, members in by_bundle.items():
        strip = prefixes[index] if index else ""
        parts = [m[len(strip) :].split("/")[:-1] for m in members]
        common = 0
        while parts and all(len(p) > common for p in parts) and len({p[common] for p in parts}) == 1:
            common += 1
        comps = {m: p[common] for m, p in zip(members, parts, strict=True) if len(p) > common}
        with_ptstalk = {comps[m] for m in comps if place(m).layout == "pt-stalk"}
        if len(with_ptstalk) >= 2:
            out.update({m: c for m, c in comps.items() if c in with_ptstalk and clean_host(c)})
    return out


def assign(
    sources: Sequence[ParsedSource], *, prefixes: Sequence[str] = ("",), names: Sequence[str] = ()
) -> Assignment:
    """Place every member of ``sources`` on a host (module docstring). ``prefixes[i]``: the member-name
    prefix of the i-th bundle read (the first has none); ``names[i]``: its file name."""
    clues = _Clues.gather(sources, prefixes)
    out = Assignment()
    canonical: dict[str, str] = {}
    best: dict[str, tuple[int, str]] = {}
    first_of_bundle: dict[int, str] = {}
    unplaced: list[ParsedSource] = []
    for s in sources:
        found = clues.of(s)
        if found is None:
            unplaced.append(s)
            continue
        rank, host, why = found
        if host_key(host) not in canonical and len(canonical) >= MAX_HOSTS:
            out.overflow.append(s.member)
            continue
        name = canonical.setdefault(host_key(host), host)
        out.host_of[s.member] = (name, why[:MAX_REASON])
        if rank < best.get(name, (99, ""))[0]:
            best[name] = (rank, why)
        first_of_bundle.setdefault(_bundle_of(s.member, prefixes), name)
    for s in unplaced:
        name, why = _unplaced(s, out, canonical, first_of_bundle, prefixes, names)
        out.host_of[s.member] = (name, why[:MAX_REASON])
        best.setdefault(name, (98, why))
    for member in out.overflow:
        name = first_of_bundle.get(_bundle_of(member, prefixes)) or next(iter(canonical.values()))
        out.host_of[member] = (name, f"more than {MAX_HOSTS} hosts are named: read with {name}"[:MAX_REASON])
    order = {}
    for s in sources:  # hosts in the order of their first member
        order.setdefault(out.host_of[s.member][0], None)
    out.hosts = [(name, best[name][1][:MAX_REASON]) for name in order]
    out.placeholder = out.placeholder and len(out.hosts) == 1
    return out


def _unplaced(
    s: ParsedSource,
    out: Assignment,
    canonical: dict[str, str],
    first_of_bundle: dict[int, str],
    prefixes: Sequence[str],
    names: Sequence[str],
) -> tuple[str, str]:
    """The host of a member no clue places, and why: its bundle's first host, else a further
    bundle's file name, else ``UNKNOWN_HOST`` (``out.placeholder`` set)."""
    index = _bundle_of(s.member, prefixes)
    if index in first_of_bundle:
        return first_of_bundle[index], (
            f"no host named in it or its collection: the bundle's host {first_of_bundle[index]}"
        )
    if index and index < len(names) and (named := clean_host(posixpath.basename(names[index]).split(".")[0])):
        return canonical.setdefault(host_key(named), named), (
            f"no host named in its bundle: named after the file {names[index]}"
        )
    out.placeholder = True
    return canonical.setdefault(host_key(UNKNOWN_HOST), UNKNOWN_HOST), "no host is named in the bundle"


@dataclass(slots=True)
class _Clues:
    """What the members of a bundle say of their hosts, by collection and directory (``gather``),
    and the best clue for one member (``of``)."""

    collection: dict[tuple[str, str | None], tuple[str, str]] = field(default_factory=dict)
    collection_vars: dict[tuple[str, str | None], tuple[str, str]] = field(default_factory=dict)
    directory: dict[str, tuple[str, str]] = field(default_factory=dict)
    manifests: list[tuple[str, str, str]] = field(default_factory=list)
    dirs: dict[str, str] = field(default_factory=dict)

    @classmethod
    def gather(cls, sources: Sequence[ParsedSource], prefixes: Sequence[str]) -> _Clues:
        """The clues of every source: pt-stalk ``-hostname`` members, manifests, the ``hostname``
        variable, a directory per host."""
        c = cls()
        for s in sources:
            d, prefix = _where(s.member)
            if s.format == "hostname" and (host := clean_host(str(s.meta.get("host") or ""))):
                c.collection.setdefault(
                    (d, prefix), (host, f"pt-stalk -hostname of its collection ({s.member})")
                )
                c.directory.setdefault(d, (host, f"a pt-stalk -hostname in its directory ({s.member})"))
            elif s.format == "manifest" and isinstance(s.meta.get("manifest"), dict):
                host = clean_host(str(s.meta["manifest"].get("hostname") or ""))  # type: ignore[union-attr]
                if host:
                    c.manifests.append((d, host, f"the collector's manifest ({s.member})"))
            if (found := _variables_host(s)) is not None:
                c.collection_vars.setdefault((d, prefix), (found[0], f"the {found[1]} variable ({s.member})"))
        c.manifests.sort(key=lambda m: -len(m[0]))  # the nearest manifest first
        c.dirs = _host_dirs(sources, prefixes)
        return c

    def of(self, s: ParsedSource) -> tuple[int, str, str] | None:
        """The best clue of ``s``'s host: (rank, best first; host; why), or None."""
        d, prefix = _where(s.member)
        own = clean_host(str(s.meta.get("host") or "")) if s.format != "hostname" else None
        if own and s.meta.get("host_origin"):
            return 0, own, str(s.meta["host_origin"])
        if (d, prefix) in self.collection and prefix is not None:
            return 1, *self.collection[(d, prefix)]
        if (d, prefix) in self.collection_vars:
            return 2, *self.collection_vars[(d, prefix)]
        for mdir, host, why in self.manifests:
            if not mdir or d == mdir or d.startswith(mdir + "/"):
                return 3, host, why
        if d in self.directory:
            return 4, *self.directory[d]
        if own:
            return 5, own, f"its {s.format} header names it"
        m = OSWATCHER_ARCHIVE.match(posixpath.basename(s.member))
        if m and place(s.member).layout == "oswatcher" and (host := clean_host(m["host"])):
            return 6, host, "OSWatcher's archive name"
        if s.member in self.dirs:
            return (
                7,
                self.dirs[s.member],
                (f"its directory {self.dirs[s.member]}/ (a directory per host; no host named inside)"),
            )
        return None


def banner_mismatches(
    sources: Sequence[ParsedSource], placed: Assignment
) -> list[tuple[ParsedSource, str, str]]:
    """(source, host its banner names, host it was placed on) for every member whose own header
    (``meta["host"]`` without an origin: a sysstat banner) names another host than the one its
    collection put it on: probably a capture taken on another server and copied in."""
    out = []
    for s in sources:
        named = clean_host(str(s.meta.get("host") or "")) if s.format != "hostname" else None
        if not named or s.meta.get("host_origin") or s.member not in placed.host_of:
            continue
        host = placed.host_of[s.member][0]
        if host_key(named) != host_key(host):
            out.append((s, named, host))
    return out
