"""``collect.sh --upload`` against Casebook's real processes (gunicorn and a Celery worker, started by
``scripts/start``): an upload link made through the API; a pt-stalk directory sent with ``--send DIR``
through a loopback proxy that kills the connection in the middle of the first PATCH (the script asks
for the offset and sends the rest from there); a fresh 2 s capture of the local MariaDB sent with
``--upload`` alone; both cases ready in the link's team with its customer and ticket. Then every log
line of every process, and the script's own output, is searched for the link's token.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import tarfile
import threading
from pathlib import Path

import requests

from tests.servers import free_port, wait_for
from tests.web.conftest import EXAMPLE1, processes_on_test_db
from web.models import Case, LinkTransfer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "collect.sh"


class CuttingProxy:
    """A TCP proxy on loopback to ``upstream_port`` that, on the first connection whose request is a
    PATCH, passes ``cut_after`` bytes of that request, ends the stream to the server and closes the
    client's side (a broken connection mid-upload); every other connection is passed whole."""

    def __init__(self, upstream_port: int, cut_after: int) -> None:
        self.upstream_port, self.cut_after = upstream_port, cut_after
        self.port = free_port()
        self.cut = threading.Event()
        self.server = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        threading.Thread(target=self._pump, args=(upstream, client, None), daemon=True).start()
        self._pump(client, upstream, self.cut_after)

    def _pump(self, src: socket.socket, dst: socket.socket, limit: int | None) -> None:
        sent, first, cutting = 0, True, False
        ends = [src, dst]
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if first and limit is not None:
                    cutting = data.startswith(b"PATCH") and not self.cut.is_set()
                    if cutting:
                        self.cut.set()
                    first = False
                if cutting and sent + len(data) >= limit:
                    # The server gets every byte passed and then the end of the stream (FIN, not a
                    # reset that would drop what it has not read yet); the client gets no answer.
                    # The pump the other way closes the server's side once it has answered.
                    dst.sendall(data[: limit - sent])
                    dst.shutdown(socket.SHUT_WR)
                    ends = [src]
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        finally:
            for s in ends:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self.server.close()


def _collect(*args: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["dash", str(SCRIPT), "--out", str(out), "--tries", "6", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MYSQL_OPTS": "-uroot -h127.0.0.1"},
    )


def _mysql_up() -> bool:
    if shutil.which("mysql") is None:
        return False
    done = subprocess.run(["mysql", "-uroot", "-h127.0.0.1", "-N", "-e", "SELECT 1"], capture_output=True)
    return done.returncode == 0


def test_collect_sh_uploads_to_a_live_server_and_resumes_a_broken_connection(
    transactional_db, tmp_path: Path, settings, redis_client
) -> None:
    with processes_on_test_db(tmp_path, settings, redis_client, CASEBOOK_LOG_LEVEL="DEBUG") as stack:
        stack.run("migrate")
        stack.start_web()
        stack.start("worker")
        made = requests.post(
            f"{stack.base_url}/api/upload-links/",
            headers=stack.api_headers(),
            json={"customer": "ACME", "ticket": "ZD-77", "uploads": 2, "days": 1},
            timeout=60,
        )
        assert made.status_code == 201, made.text
        token = made.json()["url"].split("/u/")[1].strip("/")

        # A pt-stalk directory, through a proxy that breaks the first PATCH after 300,000 bytes.
        proxy = CuttingProxy(stack.web_port, cut_after=300_000)
        out = tmp_path / "out"
        sent = _collect(
            "--upload", f"http://127.0.0.1:{proxy.port}/u/{token}/", "--send", str(EXAMPLE1), out=out
        )
        proxy.close()
        assert sent.returncode == 0, sent.stderr
        tarball = Path(sent.stdout.strip())
        assert tarball.parent == out and tarball.stat().st_size > 300_000
        assert proxy.cut.is_set()
        assert "resuming at byte" in sent.stderr
        with tarfile.open(tarball) as tar:
            assert any(n.endswith("-vmstat") for n in tar.getnames())

        # A fresh capture, sent by the collector itself.
        runs = [sent]
        if _mysql_up():
            captured = _collect("--duration", "2", "--upload", f"{stack.base_url}/u/{token}/", out=out)
            assert captured.returncode == 0, captured.stderr
            runs.append(captured)

        def finished() -> bool:
            statuses = list(Case.objects.values_list("status", flat=True))
            return len(statuses) == len(runs) and all(s in ("ready", "failed") for s in statuses)

        wait_for("the cases analysed", finished, timeout_s=300)
        # The link is used up now: the script says so, and sends nothing.
        again = _collect("--upload", f"{stack.base_url}/u/{token}/", "--send", str(tarball), out=out)
        assert again.returncode == 2 and "unknown, expired, revoked or used up" in again.stderr
        stack.stop_all()
        logs = {p.name: p.read_text(errors="replace") for p in tmp_path.glob("*.log")}

    transfers = list(LinkTransfer.objects.order_by("pk"))
    assert len(transfers) == len(runs)
    first = Case.objects.select_related("upload", "created_by").get(pk=transfers[0].case_id)
    assert first.upload.sha256 == hashlib.sha256(tarball.read_bytes()).hexdigest()
    for case in Case.objects.all():
        assert case.status == "ready", case.failure_reason
        assert (case.customer, case.ticket, case.created_by.username) == ("ACME", "ZD-77", stack.user)
    outputs = {f"run {i}": r.stdout + r.stderr for i, r in enumerate([*runs, again])}
    assert "/u/…/files/" in logs["web.log"].replace("\\u2026", "…")  # the requests were logged, masked
    assert [name for name, text in {**logs, **outputs}.items() if token in text] == []
