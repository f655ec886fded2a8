"""docs/security.md's production environment makes ``manage.py check --deploy --fail-level WARNING``
clean: the block is read from the document itself and run as a deployment would."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from tests.test_deploy import _manage

ROOT = Path(__file__).resolve().parent.parent


def _documented_env() -> dict[str, str]:
    """The ``export NAME=value`` lines of the first ``sh`` block under "Production settings"."""
    text = (ROOT / "docs" / "security.md").read_text()
    section = text[text.index("## Production settings") :]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)
    env = {}
    for name, value in re.findall(r"^export (\w+)=(.*)$", block, flags=re.M):
        env[name] = secrets.token_urlsafe(50) if value.startswith("$(") else value
    return env


def test_check_deploy_is_clean_with_the_documented_environment() -> None:
    env = _documented_env()
    assert {"CASEBOOK_SECRET_KEY", "CASEBOOK_HTTPS", "CASEBOOK_EMAIL_BACKEND"} <= set(env)
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_deploy_warns_of_mail_written_to_the_log() -> None:
    env = {k: v for k, v in _documented_env().items() if not k.startswith("CASEBOOK_EMAIL_")}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode != 0 and "(casebook.W002)" in result.stderr
