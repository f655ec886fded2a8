"""No secret in any log (issue 20): Casebook's real processes (gunicorn and a Celery worker, started
by ``scripts/start`` with their logs in files) are asked every kind of request with good and bad
input: share links good, revoked, redacted (no bundle) and unknown until 429, bad times and moments,
API calls with good, wrong and revoked tokens, good and failed logins to a lockout, password resets
to the throttle, good and forged reset links. Then every log line of every process is searched for
every secret that went by: share tokens, API tokens, the reset link's token, the session id, the CSRF
token, and every password typed (right or wrong).

Mail goes to a real SMTP server the test runs on loopback (aiosmtpd): the reset link is read from the
message, as a user would. The log files' modes are checked from scripts/run's own lines.
"""

from __future__ import annotations

import re
import secrets
import stat
import subprocess
from email import message_from_bytes
from pathlib import Path

import pytest
import requests
from aiosmtpd.controller import Controller
from django.contrib.auth import get_user_model

from tests.bundles import make_tar
from tests.servers import free_port, wait_for
from tests.web.conftest import PROCESSLIST_NO_TS, VMSTAT, processes_on_test_db
from web.models import Case

ROOT = Path(__file__).resolve().parents[2]


class _Inbox:
    """An aiosmtpd handler keeping every message it is sent."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: ANN001, N802 - aiosmtpd's hook
        self.messages.append(envelope.content)
        return "250 OK"


@pytest.fixture
def inbox():  # noqa: ANN201
    handler = _Inbox()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield handler, controller.port
    finally:
        controller.stop()


def _login(
    base: str, username: str, password: str, addr_session: requests.Session | None = None
) -> requests.Session:
    session = addr_session or requests.Session()
    session.get(f"{base}/accounts/login/", timeout=30)
    session.post(
        f"{base}/accounts/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/login/"},
        timeout=30,
    )
    return session


def _reset(base: str, email: str) -> requests.Response:
    session = requests.Session()
    session.get(f"{base}/accounts/password_reset/", timeout=30)
    return session.post(
        f"{base}/accounts/password_reset/",
        data={"email": email, "csrfmiddlewaretoken": session.cookies["csrftoken"]},
        headers={"Referer": f"{base}/accounts/password_reset/"},
        timeout=30,
    )


def test_no_secret_reaches_any_log(transactional_db, tmp_path: Path, settings, redis_client, inbox) -> None:
    handler, smtp_port = inbox
    env = {
        "CASEBOOK_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "CASEBOOK_EMAIL_HOST": "127.0.0.1",
        "CASEBOOK_EMAIL_PORT": str(smtp_port),
        "CASEBOOK_SHARE_GUESS_LIMIT": "5",
        "CASEBOOK_LOG_LEVEL": "DEBUG",  # every line any library writes, not only warnings
    }
    with processes_on_test_db(tmp_path, settings, redis_client, **env) as stack:
        stack.run("migrate")
        stack.start_web()
        stack.start("worker")
        base = stack.base_url
        api = stack.api_headers()
        api_token = api["Authorization"].removeprefix("Bearer ")
        found: dict[str, str] = {"API token": api_token, "password": stack.password}

        # A case, through the API and the worker.
        bundle = make_tar(
            tmp_path / "b.tgz",
            {
                "c/2026_04_21_16_51_41-vmstat": VMSTAT.encode(),
                "c/2026_04_21_16_51_41-processlist": PROCESSLIST_NO_TS.encode(),
            },
        )
        with bundle.open("rb") as fh:
            made = requests.post(
                f"{base}/api/cases/", headers=api, files={"bundle": ("b.tgz", fh)}, timeout=60
            )
        case_id = made.json()["id"]
        wait_for(
            "the case ready", lambda: Case.objects.filter(pk=case_id, status="ready").exists(), timeout_s=180
        )

        # Share links: one without redaction (bundle allowed), one redacted, one revoked.
        def share(body: dict) -> str:
            answer = requests.post(f"{base}/api/cases/{case_id}/shares/", headers=api, json=body, timeout=60)
            assert answer.status_code == 201, answer.text
            return answer.json()["url"].split("/s/")[1].strip("/")

        plain = share(
            {
                "redact_literals": False,
                "redact_hosts": False,
                "redact_users": False,
                "redact_schemas": False,
                "allow_bundle": True,
            }
        )
        redacted = share({})
        revoked = share({"label": "to revoke"})
        revoked_id = requests.get(f"{base}/api/cases/{case_id}/shares/", headers=api, timeout=30).json()[0][
            "id"
        ]
        assert requests.delete(f"{base}/api/cases/{case_id}/shares/{revoked_id}/", headers=api, timeout=30).ok
        found.update({"share token": plain, "redacted share token": redacted, "revoked share token": revoked})
        for token in (plain, redacted, revoked):
            for suffix in (
                "",
                "status.json",
                "timeline.json",
                "timeline.json?start=x&end=y",
                "moment.json?t=soon",
                "moment.json?t=1776790302000",
                "findings.csv",
                "report.json",
                "bundle/",
                "nothing/",
            ):
                requests.get(f"{base}/s/{token}/{suffix}", timeout=60)
            requests.post(f"{base}/s/{token}/", timeout=30)  # 405
        guesses = [secrets.token_urlsafe(32) for _ in range(8)]  # unknown tokens, until 429
        statuses = [requests.get(f"{base}/s/{g}/bundle/", timeout=30).status_code for g in guesses]
        assert 429 in statuses
        found.update({f"guessed token {n}": g for n, g in enumerate(guesses)})

        # The API: good, wrong and revoked tokens, bad input.
        wrong = "cb_" + secrets.token_urlsafe(32)
        found["wrong API token"] = wrong
        for headers in (api, {"Authorization": f"Bearer {wrong}"}, {"Authorization": f"Token {wrong}"}):
            for path in (
                "/api/cases/",
                f"/api/cases/{case_id}/moment/?at=never",
                "/api/cases/999999/",
                f"/api/cases/{case_id}/series/?start=x",
            ):
                requests.get(f"{base}{path}", headers=headers, timeout=60)

        # Logins: good, wrong until the lockout (429); pages with the session, bad times.
        wrong_passwords = [f"wrong-guess-{secrets.token_hex(6)}" for _ in range(6)]
        found.update({f"wrong password {n}": p for n, p in enumerate(wrong_passwords)})
        session = _login(base, stack.user, stack.password)
        found["session id"] = session.cookies["sessionid"]
        found["CSRF token"] = session.cookies["csrftoken"]
        for path in (
            f"/cases/{case_id}/",
            f"/cases/{case_id}/moment.json?t=x",
            f"/cases/{case_id}/timeline.json?start=x",
            "/cases/999999/",
            f"/cases/{case_id}/events.csv",
            "/admin/",
            "/readyz",
        ):
            session.get(f"{base}{path}", timeout=60)
        for password in wrong_passwords:
            _login(base, stack.user, password)
        assert _login(base, stack.user, stack.password).cookies.get("sessionid") is None  # locked out

        # Password resets: a real mail, its link used, a forged link; then the throttle.
        User = get_user_model()
        User.objects.filter(username=stack.user).update(email="faults@example.com")
        assert _reset(base, "faults@example.com").status_code == 200
        wait_for("the reset mail", lambda: handler.messages)
        body = message_from_bytes(handler.messages[0]).get_payload(decode=True).decode()
        link = re.search(r"(/accounts/reset/([^/\s]+)/([^/\s]+)/)", body)
        found["reset token"] = link.group(3)
        forged = f"/accounts/reset/{link.group(2)}/{secrets.token_hex(3)}-{secrets.token_hex(16)}/"
        found["forged reset token"] = forged.split("/")[4]
        requests.get(f"{base}{forged}", timeout=30)
        reset = requests.Session()
        form = reset.get(f"{base}{link.group(1)}", timeout=30)
        new_password = f"a new long phrase {secrets.token_hex(4)}"
        found["new password"] = new_password
        done = reset.post(
            form.url,
            data={
                "new_password1": new_password,
                "new_password2": new_password,
                "csrfmiddlewaretoken": reset.cookies["csrftoken"],
            },
            headers={"Referer": form.url},
            timeout=30,
        )
        assert done.ok and "/accounts/reset/done/" in done.url
        for _ in range(5):
            _reset(base, "faults@example.com")
        assert len(handler.messages) == settings.CASEBOOK_RESET_LIMIT_PER_ACCOUNT
        stack.stop_all()
        logs = {p.name: p.read_text(errors="replace") for p in tmp_path.glob("*.log")}

    assert {"web.log", "worker.log", "migrate.log"} <= set(logs)
    web = logs["web.log"].replace("\\u2026", "…")  # JSON lines escape the ellipsis
    assert "/s/…/" in web and '"status": 429' in web  # the requests were logged, masked
    assert "/accounts/reset/…/…/" in web
    leaks = [(what, name) for what, secret in found.items() for name, text in logs.items() if secret in text]
    assert leaks == []


def test_the_run_script_keeps_its_logs_from_other_users(tmp_path: Path) -> None:
    """The lines of scripts/run that make var/ and its logs, run in a scratch folder where an older
    world-readable log already lies: every log ends up 640 and new files are not world-readable."""
    text = (ROOT / "scripts" / "run").read_text()
    lines = text[text.index("mkdir -p var") : text.index("chmod 640 var/*.log") + len("chmod 640 var/*.log")]
    (tmp_path / "var").mkdir()
    old = tmp_path / "var" / "web.log"
    old.write_text("an older log\n")
    old.chmod(0o644)
    subprocess.run(["bash", "-euc", lines + "\necho x > var/new-file"], cwd=tmp_path, check=True, timeout=30)
    for name in ("web.log", "worker.log", "beat.log"):
        assert stat.S_IMODE((tmp_path / "var" / name).stat().st_mode) == 0o640, name
    assert stat.S_IMODE((tmp_path / "var" / "new-file").stat().st_mode) & 0o007 == 0
