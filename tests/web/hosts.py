"""Cases of several hosts for the page, compare, search and share tests.

A two-host case is made here from a real one (tests/web/test_hosts_ingest.py ingests real bundles of
several hosts): the one-host bundle is ingested for real, its host renamed to the first host's name
the test asks for, then its rows are copied to a
second host (``db-b`` by default) whose members live under ``<name>/``, whose raw lines name it
instead of the first host, and whose series are scaled (so that the two hosts' lines differ on a
chart). A cross-host finding naming both hosts is added. The shapes are those of the hosts contract
(web/models/cases.py ``Host``, ``Source.host``, ``Series.host``, ``SeriesLevel.host``, ``Finding.host`` and
``Finding.hosts``).
"""

from __future__ import annotations

import re

import numpy as np
import zstandard
from django.db import transaction

from web.history.services import case_refresh_search
from web.models import Case, Finding, Host, RawChunk, RuleResult, SampleIndex, Series, SeriesLevel, Source
from web.timeline import charts

#: Values of the added host's series are the first host's times this factor (a visibly other line).
SCALE = 0.5
#: Case id -> the host name its capture wrote (before the rows were given the first host's name).
CAPTURED: dict[int, str] = {}


def _replace(text: str, old: str, new: str) -> str:
    """``old`` as a whole name (not inside ``vmstat`` for a host named ``vm``) -> ``new``."""
    if not old:
        return text
    return re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w-])", new, text)


@transaction.atomic
def _rehosted(value: object, host: str) -> object:
    """``value`` (a stored verdict) with every finding reference's ``host`` set to ``host``."""
    if isinstance(value, list):
        return [_rehosted(v, host) for v in value]
    if isinstance(value, dict):
        out = {k: _rehosted(v, host) for k, v in value.items()}
        if "key" in out and "host" in out:
            out["host"] = host
        return out
    return value


def add_host(case: Case, name: str = "db-b", *, first_name: str | None = None, scale: float = SCALE) -> Case:
    """Give ``case``'s rows the host ``first_name`` (default: ``case.host`` or "host") when they have
    none, then copy them to a new host ``name``. Returns the case, read again, with ``host`` the
    hosts joined by ", " and its overview rebuilt."""
    hosts = list(case.hosts.all())
    # The name the capture's own headers and lines give (pt-stalk's -hostname, sysstat banners).
    captured = CAPTURED.get(case.pk) or (hosts[0].name if hosts else case.host.split(", ")[0])
    CAPTURED.setdefault(case.pk, captured)
    first = first_name or (hosts[0].name if hosts else captured) or "host"
    if not hosts:
        Host.objects.create(
            case=case,
            position=0,
            name=first,
            name_origin="pt-stalk -hostname member",
            kernel=case.kernel,
            ncpu=case.ncpu,
            window_start=case.window_start,
            window_end=case.window_end,
            utc_offset_s=case.utc_offset_s,
            utc_offset_origin=case.utc_offset_origin,
        )
        for model in (Source, Series, SeriesLevel, Finding, RuleResult):
            model.objects.filter(case=case, host="").update(host=first)
        Source.objects.filter(case=case).update(host_reason="pt-stalk -hostname member")
    elif len(hosts) == 1 and hosts[0].name != first:  # the ingest's name for it -> the test's
        for model in (Host, Source, Series, SeriesLevel, Finding, RuleResult):
            key = "name" if model is Host else "host"
            model.objects.filter(case=case, **{key: hosts[0].name}).update(**{key: first})
    if case.verdict:  # the stored verdict's references follow the first host's new name
        Case.objects.filter(pk=case.pk).update(verdict=_rehosted(case.verdict, first))
    position = case.hosts.count()
    Host.objects.create(
        case=case,
        position=position,
        name=name,
        name_origin=f"the directory '{name}/'",
        kernel=case.kernel,
        ncpu=(case.ncpu or 1) * 2,
        window_start=case.window_start,
        window_end=case.window_end,
        utc_offset_s=case.utc_offset_s,
        utc_offset_origin=case.utc_offset_origin,
        offset_s=0.4,
        offset_origin="replica relay position against its source's binlog position",
    )
    sources = list(Source.objects.filter(case=case, host=first))
    for s in sources:  # the copied sources' headers name the new host
        if s.meta.get("host") == captured:
            s.meta = {**s.meta, "host": name}
    first_members = sorted(s.member for s in sources)
    for s in sources:
        s.pk = None
        s.member = f"{name}/{s.member}"
        s.host = name
        s.host_reason = f"the directory '{name}/'"
    Source.objects.bulk_create(sources)
    series = list(Series.objects.filter(case=case, host=first))
    for s in series:
        s.pk = None
        s.host = name
        s.values = [v * scale for v in s.values]
    Series.objects.bulk_create(series)
    for level in SeriesLevel.objects.filter(case=case, host=first):
        values = np.frombuffer(bytes(level.values), dtype="<f8") * scale
        level.pk = None
        level.host = name
        level.values = values.astype("<f8").tobytes()
        level.save(force_insert=True)
    samples = list(SampleIndex.objects.filter(case=case, member__in=first_members))
    for s in samples:
        s.pk = None
        s.member = f"{name}/{s.member}"
    SampleIndex.objects.bulk_create(samples)
    chunks = list(RawChunk.objects.filter(case=case, generation=case.generation, member__in=first_members))
    for c in chunks:
        text = zstandard.ZstdDecompressor().decompress(bytes(c.text_zstd)).decode()
        c.pk = None
        c.member = f"{name}/{c.member}"
        c.text_zstd = zstandard.ZstdCompressor().compress(_replace(text, captured, name).encode())
    RawChunk.objects.bulk_create(chunks)
    findings = list(Finding.objects.filter(case=case, host=first))
    top = Finding.objects.filter(case=case).count()
    for i, f in enumerate(findings):
        f.pk = None
        f.host = name
        f.position = top + i
        f.evidence = [{**e, "member": f"{name}/{e['member']}"} if e.get("member") else e for e in f.evidence]
    Finding.objects.bulk_create(findings)
    if not Finding.objects.filter(case=case, host="").exists():
        windows = findings[0].windows if findings else []
        Finding.objects.create(
            case=case,
            position=top + len(findings),
            key="cluster.stall_holds_others",
            severity="warning",
            title=f"{name}'s stall holds {first} back",
            summary=f"{name} stalled while {first} waited for it.",
            windows=windows,
            recommendation=f"Look at {name} first.",
            rule_version=1,
            host="",
            hosts=[name, first],
        )
    names = list(case.hosts.values_list("name", flat=True))
    Case.objects.filter(pk=case.pk).update(host=", ".join(names)[:255])
    case_refresh_search(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    case.charts_overview = charts.timeline_charts(case=case, max_points=charts.OVERVIEW_POINTS)
    case.save(update_fields=["charts_overview"])
    return case
