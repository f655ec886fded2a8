"""One timeline per case: every parsed source's frames on UTC, joined by name, with derived columns.

``Timeline.from_sources`` concatenates the frames of the same name from every source (two pt-stalk
collections of the same host give one vmstat series), adds a ``member`` column so evidence can
point at raw lines, sorts by ``ts`` and derives what the rules share:

- ``vmstat`` without its since-boot rows (they average since boot: not this capture's behaviour);
- (``prepare``, per source) ``processlist`` with ``active`` (FINDINGS.md, "Counting sessions and threads right": Command
  ``Query`` or ``Execute``, not the collector's own SHOW PROCESSLIST, not system/daemon rows) and
  ``fingerprint`` (pt-fingerprint style, ``analyzer.fingerprint``);
- ``ps_threads`` with ``is_mysqld`` (``mysqld`` or ``mariadbd``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analyzer.fingerprint import fingerprints
from parsers.base import ParsedSource

#: Commands of sessions that run a statement (prepared statements show `Execute`).
ACTIVE_COMMANDS = frozenset({"Query", "Execute"})
#: Users of server-internal rows that are never client work.
INTERNAL_USERS = frozenset({"system user", "event_scheduler", "DELAYED"})
#: The collectors' own statements (pt-stalk, collect.sh, mysqladmin ext) would count themselves as load.
#: mysqladmin sends `show /*!50002 GLOBAL */ status`, hence the optional version comment.
OWN_QUERY = r"^\s*show\s+(?:/\*!\d*\s*)?(?:global\s*(?:\*/)?\s*|full\s+)?(?:processlist|status|engine)\b"
MYSQLD_COMMS = frozenset({"mysqld", "mariadbd"})


#: Text columns of the processlist kept as categories: a few distinct values repeated millions of times.
PROCESSLIST_CATEGORIES = ("user", "host", "db", "command", "state", "fingerprint", "member")
#: processlist columns the analysis keeps (the rest is per-sample detail, stored apart).
PROCESSLIST_KEPT = ("ts", "line_no", "line_end", "id", "user", "command", "time_s", "state", "info")
#: /proc/interrupts lines kept per CPU (by total rate, in each parsed piece); the others are summed per
#: CPU under OTHER_IRQ, so per-CPU totals stay exact while the frame stays small (a 64-CPU server
#: with 100 lines gives 6,400 rows a snapshot).
IRQ_LINES_KEPT = 16
OTHER_IRQ = "(other)"
#: Thread states kept one row per thread; sleeping (S) and idle kernel (I) threads are only counted.
THREAD_STATES_KEPT = frozenset({"R", "D", "Z", "T", "t", "X", "W"})


def session_is_active(pl: pd.DataFrame) -> pd.Series:
    """Per session (row of a ``processlist`` frame with ``user``, ``command`` and ``info``): True when it
    runs client work (FINDINGS.md, "Counting sessions and threads right"): Command in
    ``ACTIVE_COMMANDS``, not the collector's own statement (``OWN_QUERY``), not an internal user."""
    info = pl["info"].astype("string").fillna("") if "info" in pl else pd.Series("", index=pl.index)
    user = pl["user"].astype("string").fillna("") if "user" in pl else pd.Series("", index=pl.index)
    command = pl["command"].astype("string").fillna("") if "command" in pl else pd.Series("", index=pl.index)
    own = info.str.contains(OWN_QUERY, case=False, regex=True)
    return (command.isin(ACTIVE_COMMANDS) & ~own & ~user.isin(INTERNAL_USERS)).astype(bool)


def prepare(source: ParsedSource, *, cache: dict[str, str] | None = None) -> ParsedSource:
    """The source reduced to what the analysis keeps, with the derived columns the rules share.

    ``processlist``: adds ``active`` and ``fingerprint``, keeps ``PROCESSLIST_KEPT`` but ``info``
    (the statement text is stored apart as per-sample detail; rules read its fingerprint).
    ``ps_threads``: adds ``is_mysqld``; ``ps_state_counts`` (``ts``, ``state``, ``threads``) counts
    every thread by state, and only threads in ``THREAD_STATES_KEPT`` stay one row each (plus the
    first row of every snapshot, so that each snapshot is still seen). Text columns become
    categories. Idempotent; ``cache`` carries fingerprints across calls (statement -> fingerprint).
    """
    frames = dict(source.frames)
    pl = frames.get("processlist")
    if pl is not None and "info" in pl:
        pl = pl[[c for c in PROCESSLIST_KEPT if c in pl]]
        info = pl["info"].astype("string").fillna("")
        pl = pl.drop(columns=["info"]).assign(
            active=session_is_active(pl),
            fingerprint=fingerprints(info.where(info != ""), cache),
        )
        narrow = {c: "int32" for c in ("line_no", "line_end") if c in pl and pl[c].notna().all()}
        frames["processlist"] = pl.astype(
            {**{c: "category" for c in PROCESSLIST_CATEGORIES if c in pl}, **narrow}
        )
    ps = frames.get("ps_threads")
    if ps is not None and "is_mysqld" not in ps:
        comm = (
            ps["comm"].astype("string") if "comm" in ps else pd.Series(pd.NA, index=ps.index, dtype="string")
        )
        ps = ps.assign(is_mysqld=comm.isin(MYSQLD_COMMS).fillna(False).astype(bool))
        if "state" in ps and ps["state"].notna().any():
            state = ps["state"].astype("string")
            frames["ps_state_counts"] = (
                ps.assign(state=state).groupby(["ts", "state"]).size().rename("threads").reset_index()
            )
            keep = state.isin(THREAD_STATES_KEPT).fillna(False) | ~ps["ts"].duplicated()
            ps = ps[keep.to_numpy()].reset_index(drop=True)
        frames["ps_threads"] = ps
    it = frames.get("interrupts")
    if it is not None and len(it) and "per_s" in it and not source.meta.get("interrupts_reduced"):
        frames["interrupts"] = _fold_minor_irqs(it)
        source = dataclasses.replace(source, meta={**source.meta, "interrupts_reduced": True})
    return dataclasses.replace(source, frames=frames)


#: Distinct statements whose fingerprint ``reduce_piece`` remembers (then it starts afresh).
MAX_CACHED_FINGERPRINTS = 100_000
_fingerprint_cache: dict[str, str] = {}


def reduce_piece(source: ParsedSource) -> ParsedSource:
    """``prepare`` with fingerprints remembered across the calls of this process (bounded by
    ``MAX_CACHED_FINGERPRINTS``): what an ingest applies to each parsed piece of a capture, in
    the worker or in a parse process (``parsers.pool``), before the full frames are dropped."""
    if len(_fingerprint_cache) > MAX_CACHED_FINGERPRINTS:
        _fingerprint_cache.clear()
    return prepare(source, cache=_fingerprint_cache)


def _fold_minor_irqs(it: pd.DataFrame) -> pd.DataFrame:
    """Keep the IRQ_LINES_KEPT busiest lines per CPU; sum the others per (ts, cpu) as OTHER_IRQ."""
    irq = it["irq"].astype("string")
    top = it.assign(irq=irq).groupby("irq")["per_s"].sum().nlargest(IRQ_LINES_KEPT).index
    keep = irq.isin(top).fillna(False).to_numpy()
    rest = it[~keep]
    parts = [it[keep].assign(irq=irq[keep])]
    if len(rest):
        grouped = rest.groupby(["ts", "cpu"], sort=False)
        other = pd.DataFrame(
            {
                "per_s": grouped["per_s"].sum(min_count=1),
                "line_no": grouped["line_no"].min(),
            }
        ).reset_index()
        parts.append(other.assign(irq=OTHER_IRQ))
    out = (
        pd.concat(parts, ignore_index=True)
        .sort_values(["ts", "line_no"], kind="stable")
        .reset_index(drop=True)
    )
    # what the rules read (ts, irq, cpu, per_s, line_no), in narrow types: this frame has a row per
    # CPU per line per snapshot
    out = out.drop(columns=[c for c in ("snapshot", "count") if c in out])
    return out.astype({"irq": "category", "per_s": "float32", "line_no": "int32", "cpu": "int16"})


def _labels(values: pd.Series) -> pd.Series:
    """Text values as labels (missing -> "(none)", empty -> "(empty)"), as a category relabelled per
    distinct value: a one-hour processlist has millions of rows and a few hundred distinct states."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype("category")
    cats = values.cat.categories.astype("string")
    codes, uniques = pd.factorize(np.array([*cats.where(cats != "", "(empty)"), "(none)"], dtype=object))
    # a missing value has code -1, which picks the last label: "(none)"
    return pd.Series(
        pd.Categorical.from_codes(codes[values.cat.codes.to_numpy()], uniques), index=values.index
    )


def _joined(chunks: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames of one name joined and sorted by ``ts`` (stable), copying only when needed: a
    one-hour capture's processlist frame is hundreds of MB."""
    frame = chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)
    if "member" in frame and not isinstance(frame["member"].dtype, pd.CategoricalDtype):
        frame["member"] = frame["member"].astype("category")  # members whose categories differ
    if not frame["ts"].is_monotonic_increasing:
        frame = frame.sort_values("ts", kind="stable")
    return frame.reset_index(drop=True)


@dataclass(slots=True)
class Timeline:
    """The aligned data of one case. ``frames``: name -> DataFrame sorted by ``ts`` (UTC)."""

    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    ncpu: int | None = None
    host: str | None = None
    utc_offset_s: int | None = None
    variables: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_sources(
        cls,
        sources: Iterable[ParsedSource],
        *,
        ncpu: int | None = None,
        host: str | None = None,
        utc_offset_s: int | None = None,
    ) -> Timeline:
        parts: dict[str, list[pd.DataFrame]] = {}
        variables: dict[str, str] = {}
        cache: dict[str, str] = {}
        for source in sources:
            source = prepare(source, cache=cache)
            found = source.meta.get("variables")
            if isinstance(found, dict):
                variables.update({str(k): str(v) for k, v in found.items()})
            for name, frame in source.frames.items():
                if len(frame):
                    member = pd.Categorical.from_codes(np.zeros(len(frame), dtype="int8"), [source.member])
                    parts.setdefault(name, []).append(frame.assign(member=member))
        frames = {name: _joined(chunks) for name, chunks in parts.items()}
        tl = cls(frames=frames, ncpu=ncpu, host=host, utc_offset_s=utc_offset_s, variables=variables)
        tl._derive()
        return tl

    def _derive(self) -> None:
        vm = self.frames.get("vmstat")
        if vm is not None and "since_boot" in vm:
            self.frames["vmstat"] = vm[~vm["since_boot"].astype(bool)].reset_index(drop=True)

    @property
    def inputs(self) -> frozenset[str]:
        """Names a rule can require: the non-empty frames, ``variables`` and ``ncpu`` when known."""
        names = {name for name, frame in self.frames.items() if len(frame)}
        if self.variables:
            names.add("variables")
        if self.ncpu:
            names.add("ncpu")
        return frozenset(names)

    def frame(self, name: str) -> pd.DataFrame:
        """The frame ``name`` (an empty frame with a ``ts`` column when the bundle has none)."""
        found = self.frames.get(name)
        if found is None:
            return pd.DataFrame({"ts": pd.Series([], dtype="datetime64[ns, UTC]")})
        return found

    @property
    def window(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        starts = [f["ts"].min() for f in self.frames.values() if len(f)]
        ends = [f["ts"].max() for f in self.frames.values() if len(f)]
        return (min(starts), max(ends)) if starts else None

    def lines_of(self, frame: pd.DataFrame) -> tuple[str | None, tuple[int, int] | None]:
        """The member and (first, last) raw line numbers behind the rows of ``frame`` (first member)."""
        if not len(frame) or "line_no" not in frame:
            return None, None
        member = str(frame["member"].iloc[0]) if "member" in frame else None
        rows = frame[frame["member"] == member] if member is not None else frame
        last_col = "line_end" if "line_end" in rows else "line_no"
        return member, (int(rows["line_no"].min()), int(rows[last_col].max()))

    def processlist_counts(
        self, column: str = "state", *, active_only: bool = True, top: int | None = None
    ) -> pd.DataFrame:
        """Sessions per snapshot by ``column`` (state, command, fingerprint): index ts, one column per
        value; only the ``top`` most frequent values when given (a capture can hold 10,000 query
        fingerprints: a dense table of all of them would not fit in memory)."""
        pl = self.frame("processlist")
        if not len(pl):
            return pd.DataFrame()
        rows = pl[pl["active"]] if active_only else pl
        values = _labels(rows[column])
        if top is not None:
            keep = values.value_counts().index[:top]
            rows, values = rows[values.isin(keep).to_numpy()], values[values.isin(keep)]
        counts = rows.assign(_v=values).groupby(["ts", "_v"], observed=True).size().unstack(fill_value=0)
        counts.columns = pd.Index([str(c) for c in counts.columns], name="_v")
        counts = counts[sorted(counts.columns)]
        all_ts = pd.Index(pl["ts"].drop_duplicates().sort_values())
        return counts.reindex(all_ts, fill_value=0)
