"""The search document of a case (web/history/search.py) kept current: the one write of history."""

from __future__ import annotations

from web.history.search import search_document
from web.models import Case


def case_refresh_search(*, case_id: int) -> None:
    """Rebuild the case's full-text search document (``Case.search_vector``, web/history/search.py) from its
    title, customer, ticket, tags, host, resolution, finding keys, wait channels, fingerprints and notes:
    after any of them changes."""
    Case.objects.filter(pk=case_id).update(search_vector=search_document())
