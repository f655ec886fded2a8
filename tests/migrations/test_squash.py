"""One linear history: ``web/migrations/0001_squashed_0096_finding_culprit`` replaces the 18 files
(0001_initial .. 0096_finding_culprit, four of them merges) that it was squashed from.

Both ways a database can reach it must give the same schema: migrated from nothing by the squash, and
migrated first by the old files (taken from git at the commit before they were deleted) and then by
today's migrations, which must recognise it through ``replaces`` and record the squash as applied.
Each runs ``manage.py migrate`` in its own interpreter against a scratch database of its own.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
#: The last commit with the old migration files (``git show`` reads them from it).
OLD_HISTORY_COMMIT = "ef68060676b672131b3592515750ef94c2b2aec5"
SQUASH = "0001_squashed_0096_finding_culprit"

#: The schema as PostgreSQL describes it, column order left out (a squash folds added columns into
#: the CREATE TABLE, so they come in another order; nothing reads them by position), and the rows
#: the history itself writes (the default team).
SCHEMA_QUERIES = {
    "columns": """SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default,
                         is_identity, character_maximum_length, numeric_precision
                    FROM information_schema.columns WHERE table_schema = 'public'""",
    "constraints": """SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
                        FROM pg_constraint WHERE connamespace = 'public'::regnamespace""",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'",
    "storage": """SELECT c.relname, a.attname, a.attstorage FROM pg_attribute a
                    JOIN pg_class c ON c.oid = a.attrelid
                   WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
                     AND a.attnum > 0 AND NOT a.attisdropped""",
    "extensions": "SELECT extname FROM pg_extension",
    "triggers": "SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal",
    "sequences": "SELECT sequencename, data_type::text FROM pg_sequences WHERE schemaname = 'public'",
    "teams": "SELECT name FROM web_team",
}


def _url(db: str) -> str:
    conf = settings.DATABASES["default"]
    return f"postgresql://{conf['USER']}@{conf['HOST']}:{conf['PORT']}/{db}"


@pytest.fixture
def scratch_db():
    """Makes scratch databases on the test server (named after the configured one), drops them after."""
    made: list[str] = []
    admin = psycopg.connect(_url("postgres"), autocommit=True)

    def make() -> str:
        name = f"{settings.DATABASES['default']['NAME']}_mig_{uuid.uuid4().hex[:8]}"
        admin.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return name

    yield make
    for name in made:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.close()


def _migrate(db: str, tmp_path: Path, settings_module: str = "web.settings") -> str:
    """``manage.py migrate`` on ``db`` in a fresh interpreter; its output."""
    env = {
        **os.environ,
        "CASEBOOK_DATABASE_URL": _url(db).replace("postgresql://", "postgres://"),
        "DJANGO_SETTINGS_MODULE": settings_module,
        "PYTHONPATH": f"{tmp_path}:{ROOT}",
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--no-input"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _schema(db: str) -> dict[str, list[tuple]]:
    with psycopg.connect(_url(db)) as conn:
        return {name: sorted(conn.execute(sql).fetchall()) for name, sql in SCHEMA_QUERIES.items()}


def _applied(db: str) -> set[str]:
    with psycopg.connect(_url(db)) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM django_migrations WHERE app = 'web'")}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _old_history(tmp_path: Path) -> list[str]:
    """The old migration files, written to a package ``old_web_migrations``, and a settings module
    ``old_history_settings`` that migrates the app with them; returns their names."""
    listing = _git("ls-tree", "--name-only", f"{OLD_HISTORY_COMMIT}:web/migrations/").split()
    package = tmp_path / "old_web_migrations"
    package.mkdir()
    for name in listing:
        (package / name).write_text(_git("show", f"{OLD_HISTORY_COMMIT}:web/migrations/{name}"))
    (tmp_path / "old_history_settings.py").write_text(
        'from web.settings import *  # noqa: F403\n\nMIGRATION_MODULES = {"web": "old_web_migrations"}\n'
    )
    return sorted(name.removesuffix(".py") for name in listing if name[0].isdigit())


def test_the_history_starts_with_the_one_squashed_migration() -> None:
    names = sorted(p.stem for p in (ROOT / "web" / "migrations").glob("0*.py"))
    assert names[0] == SQUASH
    migration = importlib.import_module(f"web.migrations.{SQUASH}").Migration
    assert migration.initial
    assert not [app for app, _ in migration.dependencies if app == "web"]


def test_a_fresh_database_and_one_migrated_by_the_old_history_have_the_same_schema(
    tmp_path: Path, scratch_db
) -> None:
    old_names = _old_history(tmp_path)
    assert len(old_names) == 18 and old_names[-1] == "0096_finding_culprit"
    migration = importlib.import_module(f"web.migrations.{SQUASH}").Migration
    assert sorted(name for _, name in migration.replaces) == old_names

    fresh, old = scratch_db(), scratch_db()
    assert f"Applying web.{SQUASH}" in _migrate(fresh, tmp_path)
    assert "Applying web.0050_teams_and_case_history" in _migrate(old, tmp_path, "old_history_settings")
    assert _applied(old) == set(old_names)
    again = _migrate(old, tmp_path)  # today's history over the old one: recognised, nothing run
    assert f"Applying web.{SQUASH}" not in again
    # the squash recorded as applied (migrations added after it, if any, applied on top)
    assert {*old_names, SQUASH} <= _applied(old)

    fresh_schema, old_schema = _schema(fresh), _schema(old)
    assert len(fresh_schema["columns"]) > 100 and fresh_schema["teams"] == [("Default",)]
    for part in SCHEMA_QUERIES:
        assert fresh_schema[part] == old_schema[part], part
