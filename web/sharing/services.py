"""Share links: a customer's read-only, optionally redacted view of one case.

Writes (create, revoke, a view recorded) and the reads the shared views need. Tokens, their lookup
and the guess limit are those of every link by token (web/tokenlinks.py). Redaction (web/sharing/redaction/)
needs the case's hosts, users and schemas: they are collected once per link from the fields every member's
format declares sensitive (``SENSITIVE`` of its parser), in the text kept with the case, read again piece by
piece as the ingest reads it, and collected again when the case was re-analyzed since; the server's own names
come from the case's host and its sources' headers (``web.sharing.redaction.redactor.server_names``), its
replication source from SHOW SLAVE STATUS. Every link has a redactor, even one that redacts none of the kinds:
passwords are masked on every link.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import F
from django.utils import timezone
from redis.exceptions import RedisError

from parsers import registry
from parsers.base import ClockHints, ParseError
from parsers.ingest.cutting import split
from parsers.ingest.hosts import UNKNOWN_HOST
from parsers.ingest.pieces import parse_piece
from parsers.rawtext import text_of
from web.models import Case, Finding, Host, RawChunk, ShareLink, Source
from web.sharing.redaction import formats
from web.sharing.redaction.redactor import (
    REDACT_ALL,
    VOCABULARY_VERSION,
    Choices,
    Redactor,
    Vocabulary,
    VocabularyBuilder,
    server_names,
)
from web.tokenlinks import live, new_token, token_hash  # noqa: F401 - token_hash: read here by tests

DEFAULT_DAYS = 30
MAX_DAYS = 365
#: How long a case's collected vocabulary stays in the cache (links keep their own copy anyway).
VOCABULARY_CACHE_S = 24 * 3600


@dataclass(frozen=True)
class NewShare:
    """A link just made: the row, and its token (shown once: it is not stored)."""

    share: ShareLink
    token: str

    @property
    def path(self) -> str:
        return f"/s/{self.token}/"


def share_create(
    *,
    case: Case,
    user: object | None,
    days: int = DEFAULT_DAYS,
    choices: Choices = REDACT_ALL,
    allow_bundle: bool = False,
    label: str = "",
) -> NewShare:
    """A new link to ``case``, valid ``days`` days (1..MAX_DAYS), redacting as ``choices`` says.

    Raises ValueError when ``days`` is out of range or a raw bundle is allowed on a redacted link
    (the bundle is the capture as taken: it would give back everything the redaction hides)."""
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"A link lasts 1 to {MAX_DAYS} days.")
    if allow_bundle and choices.any:
        raise ValueError("The raw bundle can be allowed only on a link without redaction.")
    token = new_token()
    share = ShareLink.objects.create(
        case=case,
        token_sha256=token_hash(token),
        label=label[:200],
        created_by=user if getattr(user, "is_authenticated", False) else None,
        expires_at=timezone.now() + timedelta(days=days),
        redact_literals=choices.literals,
        redact_hosts=choices.hosts,
        redact_users=choices.users,
        redact_schemas=choices.schemas,
        allow_bundle=allow_bundle,
    )
    if choices.any:
        vocabulary_for(share, case)
    return NewShare(share, token)


def share_create_from_fields(*, case: Case, user: object | None, fields: dict[str, object]) -> NewShare:
    """``share_create`` from a form's or a serializer's cleaned fields: ``days``, ``label``,
    ``redact_literals``, ``redact_hosts``, ``redact_users``, ``redact_schemas``, ``allow_bundle``."""
    return share_create(
        case=case,
        user=user,
        days=int(fields["days"]),
        choices=Choices(
            literals=bool(fields["redact_literals"]),
            hosts=bool(fields["redact_hosts"]),
            users=bool(fields["redact_users"]),
            schemas=bool(fields["redact_schemas"]),
        ),
        allow_bundle=bool(fields["allow_bundle"]),
        label=str(fields.get("label") or ""),
    )


def share_revoke(*, share: ShareLink, user: object | None) -> ShareLink:
    """Revoke ``share`` now (a link revoked already keeps its first revocation)."""
    if share.revoked_at is None:
        share.revoked_at = timezone.now()
        share.revoked_by = user if getattr(user, "is_authenticated", False) else None
        share.save(update_fields=["revoked_at", "revoked_by"])
    return share


def share_for_token(token: str) -> ShareLink | None:
    """The live link of ``token`` (not revoked, not expired), else None: unknown, expired and
    revoked tokens are not told apart."""
    return live(ShareLink, token).first()


def share_record_view(share: ShareLink) -> None:
    """Count one view of the shared page (in the database, without a read-modify-write race)."""
    ShareLink.objects.filter(pk=share.pk).update(
        view_count=F("view_count") + 1, last_viewed_at=timezone.now()
    )


def choices_of(share: ShareLink) -> Choices:
    return Choices(
        literals=share.redact_literals,
        hosts=share.redact_hosts,
        users=share.redact_users,
        schemas=share.redact_schemas,
    )


def redactor_for(share: ShareLink, case: Case) -> Redactor:
    """The link's redactor for its ``case``. A link that redacts none of the kinds still has one: it
    masks passwords (and needs no vocabulary)."""
    choices = choices_of(share)
    key = f"{settings.SECRET_KEY}:share:{share.pk}".encode()
    return Redactor(choices, vocabulary_for(share, case) if choices.any else Vocabulary(), key)


def vocabulary_for(share: ShareLink, case: Case) -> Vocabulary:
    """The vocabulary of ``case`` (the link's) for ``share``: kept on the link, taken again when the
    case's generation changed since (a re-analysis) or when it was collected by an older Casebook
    (another ``VOCABULARY_VERSION``: fewer fields were collected then).
    Collecting it reads the whole processlist (seconds for a long capture), so it is also kept in
    Django's cache for the case's generation: a second link of the same case gets it at once."""
    stored = share.vocabulary
    if (
        stored is None
        or share.vocabulary_generation != case.generation
        or stored.get("version") != VOCABULARY_VERSION
    ):
        # The ingest's time as well: another database (tests, a second deployment) on the same
        # Redis has cases of the same number and generation.
        stamp = case.ingested_at.timestamp() if case.ingested_at else 0
        key = f"share-vocabulary:{VOCABULARY_VERSION}:{case.pk}:{case.generation}:{stamp}"
        try:
            data = cache.get(key)
        except RedisError:  # no cache while Redis is away: collected again
            data = None
        if data is None:
            data = collect_vocabulary(case).as_json()
            with contextlib.suppress(RedisError):
                cache.set(key, data, timeout=VOCABULARY_CACHE_S)
        share.vocabulary, share.vocabulary_generation = data, case.generation
        ShareLink.objects.filter(pk=share.pk).update(vocabulary=data, vocabulary_generation=case.generation)
    return Vocabulary.from_json(share.vocabulary)


class _ChunkReader(io.RawIOBase):
    """The kept text of one member (UTF-8 bytes) read from its compressed chunks in line order."""

    def __init__(self, case: Case, member: str) -> None:
        self.chunks = (
            RawChunk.objects.filter(case=case, generation=case.generation, member=member)
            .order_by("line_start")
            .values_list("text_zstd", flat=True)
            .iterator(chunk_size=4)
        )
        self.buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:
        while len(self.buffer) < len(buf):
            data = next(self.chunks, None)
            if data is None:
                break
            self.buffer += text_of(bytes(data)).encode("utf-8")
        n = min(len(buf), len(self.buffer))
        buf[:n] = self.buffer[:n]
        self.buffer = self.buffer[n:]
        return n


def collect_vocabulary(case: Case) -> Vocabulary:
    """Hosts, users, schemas and statements of every member of the case, from the fields its format
    declares (``SENSITIVE``: web/sharing/redaction/formats.py), read from their kept text piece by
    piece (``PIECE_BYTES`` at a time), and the server's own names (``server_names_of``). A piece
    that cannot be parsed again gives what its lines' declared patterns find."""
    builder = VocabularyBuilder()
    builder.add_servers(server_names_of(case))
    for member, fmt in Source.objects.filter(case=case).values_list("member", "format"):
        sensitive = formats.sensitive_of(fmt)
        if sensitive is None or not sensitive.collects:
            continue
        module = registry.by_format(fmt)
        for piece in split(b"", _ChunkReader(case, member)):
            formats.collect_lines(
                builder, sensitive, piece.data[piece.overlap_bytes :].decode("utf-8", "replace").splitlines()
            )
            if not sensitive.has_columns:
                continue
            try:
                parsed = parse_piece(module, piece, member=member, clock=ClockHints())
            except ParseError:
                continue
            formats.collect(builder, sensitive, parsed.frames)
    return builder.vocabulary()


def server_names_of(case: Case) -> list[str]:
    """The servers' own names in ``case``: its host, the name of each of its hosts (``Host.name``, the
    host of every source and finding; a name found in no header, a host's directory, too; never the
    placeholder ``UNKNOWN_HOST`` of a bundle that names no host) and the names its sources' headers, the
    manifest and the variables give (``web.sharing.redaction.redactor.server_names``)."""
    hosts = {
        *Host.objects.filter(case=case).values_list("name", flat=True),
        *Source.objects.filter(case=case).values_list("host", flat=True).distinct(),
        *Finding.objects.filter(case=case).values_list("host", flat=True).distinct(),
        *(h for names in Finding.objects.filter(case=case).values_list("hosts", flat=True) for h in names),
        *case.host.split(", "),
    }
    metas = Source.objects.filter(case=case).values_list("meta", flat=True)
    return server_names(case.host, metas, hosts=sorted(h for h in hosts if h and h != UNKNOWN_HOST))
