"""Production: `check --deploy` with the documented environment, and the Docker files against
scripts/run (Docker itself cannot run here, so the files are read and compared).

One definition of every process's command lives in scripts/start (web, worker, beat, migrate); the
image runs it as its entry point, docker-compose.yml names a role per service, and scripts/run (with
scripts/setup.sh) starts the same roles on a machine.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ROLES = ("web", "worker", "beat", "migrate")
#: The production environment as docs/operations.md documents it (section "Health, logs, production").
PRODUCTION_ENV = {
    "CASEBOOK_SECRET_KEY": secrets.token_urlsafe(50),
    "CASEBOOK_DEBUG": "0",
    "CASEBOOK_ALLOWED_HOSTS": "casebook.example.com",
    "CASEBOOK_PUBLIC_URL": "https://casebook.example.com",
    "CASEBOOK_HTTPS": "1",
    "CASEBOOK_BEHIND_PROXY": "1",
    "CASEBOOK_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
    "CASEBOOK_EMAIL_HOST": "smtp.example.com",
}


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The environment of a deployment: none of this test run's own variables (CASEBOOK_*, Django's).
    keep = ("PATH", "HOME", "LANG", "TMPDIR", "CASEBOOK_DATABASE_URL", "CASEBOOK_REDIS_URL")
    base = {k: v for k, v in os.environ.items() if k in keep}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_deploy_passes_with_the_documented_production_environment() -> None:
    result = _manage("check", "--deploy", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    output = result.stdout + result.stderr
    # Django's security checks and Casebook's own have nothing to say.
    assert not re.findall(r"\((security|casebook)\.\w+\)", output), output


def test_the_operations_doc_documents_that_environment() -> None:
    production = (ROOT / "docs" / "operations.md").read_text().split("## Health, logs, production", 1)[1]
    for name in PRODUCTION_ENV:
        assert f"`{name}" in production, name


def test_check_deploy_refuses_the_development_secret_key() -> None:
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "CASEBOOK_SECRET_KEY"}
    result = _manage("check", "--deploy", env=env)
    assert result.returncode != 0
    assert "(casebook.E001) CASEBOOK_SECRET_KEY is not set" in result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"CASEBOOK_STALE_AFTER": "5"},
            "CASEBOOK_STALE_AFTER must be at least 3 x CASEBOOK_HEARTBEAT_INTERVAL",
        ),
        ({"CASEBOOK_SWEEP_INTERVAL": "0"}, "CASEBOOK_SWEEP_INTERVAL=0 must be at least 1"),
        (
            {"CASEBOOK_TASK_TIME_LIMIT": "60"},
            "CASEBOOK_TASK_TIME_LIMIT must be above CASEBOOK_TASK_SOFT_TIME_LIMIT",
        ),
        ({"CASEBOOK_LOG_FORMAT": "xml"}, "CASEBOOK_LOG_FORMAT='xml' is not one of json, text"),
    ],
)
def test_a_malformed_fault_or_log_setting_stops_start_up(env: dict[str, str], message: str) -> None:
    result = _manage("check", env=env)
    assert result.returncode != 0 and message in result.stderr


# ---------------------------------------------------------------------------------- scripts/start


def _start_roles() -> dict[str, str]:
    """Role -> the command lines scripts/start runs for it (its ``case`` branches)."""
    text = (ROOT / "scripts" / "start").read_text()
    branches = re.findall(r"^  (\w+)\)\n(.*?);;", text, flags=re.M | re.S)
    return {role: " ".join(body.split()) for role, body in branches}


def test_scripts_start_defines_each_process_once() -> None:
    roles = _start_roles()
    assert set(roles) == set(ROLES)
    assert 'exec "$BIN/gunicorn" -c "$ROOT/web/gunicorn_conf.py" web.wsgi' in roles["web"]
    assert (
        'exec nice -n "${CASEBOOK_WORKER_NICE:-10}" "$BIN/celery" -A web --quiet worker -Q "$QUEUE"'
        in roles["worker"]
    )
    assert 'exec "$BIN/celery" -A web --quiet beat' in roles["beat"]
    assert (
        'manage.py" migrate --noinput' in roles["migrate"]
        and 'manage.py" create_bucket' in roles["migrate"]
        and 'manage.py" create_engineer' in roles["migrate"]
    )


def test_scripts_start_refuses_an_unknown_role() -> None:
    result = subprocess.run(
        [str(ROOT / "scripts" / "start"), "celery"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and "usage: scripts/start web|worker|beat|migrate" in result.stderr


def test_scripts_run_starts_web_worker_and_beat_and_migrates_through_scripts_start() -> None:
    run = (ROOT / "scripts" / "run").read_text()
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    for role in ("web", "worker", "beat"):
        assert re.search(rf"^\S*\s*scripts/start {role} >var/{role}\.log 2>&1 &$", run, flags=re.M), role
    assert "setup_database" in run and re.search(r"^\s+scripts/start migrate\b", setup, flags=re.M)
    # No process is started around the launcher.
    assert not re.search(r"(celery|gunicorn)\s+(-A|web\.wsgi)", run)


# ------------------------------------------------------------------------------ Dockerfile, compose


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_the_image_installs_dependencies_at_build_time_collects_static_files_and_runs_unprivileged() -> None:
    steps = _dockerfile()
    instructions = [i for i, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim-bookworm")
    runs = [args for i, args in steps if i == "RUN"]
    install = next(i for i, (ins, args) in enumerate(steps) if ins == "RUN" and "pip install -r" in args)
    copy_all = steps.index(("COPY", ". ."))
    assert install < copy_all  # dependencies in a layer of their own, before the code
    assert any("manage.py collectstatic --noinput" in args for args in runs)
    assert any("-m compileall -q analyzer parsers web" in args for args in runs)  # parse processes start fast
    user = steps[instructions.index("USER")][1]
    assert user not in ("root", "0") and any("useradd" in a and user in a for a in runs)
    assert instructions.index("USER") > max(i for i, (ins, _) in enumerate(steps) if ins == "RUN")
    assert ("ENTRYPOINT", '["scripts/start"]') in steps and ("CMD", '["web"]') in steps


def test_the_image_installs_the_runtime_part_of_the_pinned_requirements() -> None:
    runtime, _, tooling = (ROOT / "requirements.txt").read_text().partition("# Tests and tooling")
    assert tooling, "requirements.txt lost the '# Tests and tooling' line the Dockerfile cuts at"
    names = {line.split("==")[0].split("[")[0].lower() for line in runtime.splitlines() if "==" in line}
    assert {"django", "celery", "gunicorn", "psycopg", "python-json-logger", "whitenoise"} <= names
    assert not {"pytest", "playwright", "locust", "ruff"} & names


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_the_image_as_migrations_web_workers_and_beat() -> None:
    services = _compose()["services"]
    assert set(services) == {"postgres", "redis", "s3", "migrate", *ROLES}
    for role in ROLES:
        service = services[role]
        assert service["build"] == "." and service["command"] == [role], role
        # The code and its dependencies come from the image, never from a mount of this folder.
        assert all(not str(v).startswith((".", "/app:")) for v in service.get("volumes", [])), role
        assert service["environment"]["CASEBOOK_DATABASE_URL"].endswith("@postgres:5432/casebook")
        assert service["environment"]["CASEBOOK_REDIS_URL"] == "redis://redis:6379/0"
    assert services["migrate"]["restart"] == "no"
    for role in ("web", "worker", "beat"):
        assert services[role]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_compose_can_scale_the_workers() -> None:
    worker = _compose()["services"]["worker"]
    # `docker compose up --scale worker=N` needs no fixed name and no published port.
    assert "container_name" not in worker and "ports" not in worker
    assert "volumes" not in worker  # no folder shared with the web: the uploads are in the bucket


def _default(value: str) -> str:
    """The value compose gives ``${NAME:-default}`` (or ``${NAME-default}``) when NAME is not set."""
    found = re.fullmatch(r"\$\{\w+:?-(.*)\}", value)
    return found.group(1) if found else value


def test_compose_keeps_uploads_in_its_s3_service() -> None:
    services = _compose()["services"]
    s3 = services["s3"]
    assert s3["image"].startswith("motoserver/moto:") and s3["healthcheck"]["test"]
    for role in ("migrate", *ROLES):
        env = {name: _default(str(value)) for name, value in services[role]["environment"].items()}
        assert env["CASEBOOK_STORAGE_URL"].startswith("s3://"), role
        assert urlparse(env["CASEBOOK_S3_ENDPOINT_URL"]).hostname == "s3", role
        assert env["AWS_ACCESS_KEY_ID"] and env["AWS_SECRET_ACCESS_KEY"] and env["CASEBOOK_S3_REGION"], role
        assert services[role]["depends_on"]["s3"] == {"condition": "service_healthy"}, role
    assert "media" not in _compose().get("volumes", {})


def test_compose_passes_only_settings_the_code_reads() -> None:
    code = (
        "".join(
            p.read_text()
            for p in [
                ROOT / "web" / "settings.py",
                ROOT / "web" / "gunicorn_conf.py",
                ROOT / "scripts" / "start",
            ]
        )
        + (ROOT / "web" / "management" / "commands" / "create_engineer.py").read_text()
    )
    for name in _compose()["services"]["web"]["environment"]:
        assert name in code, f"{name} is set in docker-compose.yml but read nowhere"
