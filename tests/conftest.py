"""Shared test fixtures: the path to ../shared/samples (skip when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    """WhiteNoise wants STATIC_ROOT to exist; the tests serve static files through the finders."""
    from django.conf import settings

    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)


@pytest.fixture
def samples() -> Path:
    """``../shared/samples``, read in place; the test is skipped when it is absent."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is absent")
    return SAMPLES


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
