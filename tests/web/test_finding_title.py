"""A finding whose title runs past what its row holds is written cut, not lost with its case."""

from __future__ import annotations

from dataclasses import replace

from tests.analyzer.test_bundle_verdicts import BUNDLES, _analyse
from web.ingest.prepare import TITLE_MAX_CHARS, finding_fields
from web.models import Finding


def test_a_title_longer_than_its_column_is_cut_with_an_ellipsis() -> None:
    """The staged Galera node desynced by a backup: the node's finding names the node, its state and
    the backup's session 15 (250 characters); with its cause named twice, as a title of a finding
    joining several causes can, it runs past the column."""
    assert TITLE_MAX_CHARS == Finding._meta.get_field("title").max_length
    found = next(
        f for f in _analyse(BUNDLES / "waits-galera-ftwrl.tar.gz").findings if f.key == "galera-node-behind"
    )
    assert len(found.title) <= TITLE_MAX_CHARS and finding_fields(found)["title"] == found.title
    found = replace(found, title=f"{found.title}; {found.title}")
    assert len(found.title) > TITLE_MAX_CHARS
    title = finding_fields(found)["title"]
    assert len(title) == TITLE_MAX_CHARS and title.endswith("…")
    assert found.title.startswith(title[:-1])
    assert "session 15" in title
