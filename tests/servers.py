"""Servers and processes a test starts itself, for tests of what happens when they fail.

- ``PostgresServer``: a throw-away cluster of the machine's PostgreSQL 15 (initdb/pg_ctl under
  /usr/lib/postgresql/15/bin) on a spare loopback port, run as the ``postgres`` user when the tests
  run as root (initdb refuses root).
- ``RedisServer``: a ``redis-server`` on a spare loopback port that keeps nothing on disk, like the
  one this machine runs: a restart loses what was queued.
- ``Process``: a command in a process group of its own, logging to a file, that can be stopped
  politely or killed with SIGKILL as a whole (the way the OOM killer or a host crash ends a worker).
- ``MariaDBServer``: a throw-away MariaDB (``mariadb-install-db``, ``mariadbd``) on a spare loopback
  port and a socket of its own, root without a password, with the server options a test asks for
  (``--performance-schema=ON`` ...).
- ``MotoServer``: moto's standalone S3-compatible server (``moto_server``, of ``moto[server]``) on a
  spare loopback port, its objects in memory.
- ``CasebookProcesses``: Casebook's own processes (``scripts/start web|worker|beat|migrate``) pointed
  at a database and a broker, with the fault-handling intervals shortened so a test takes seconds;
  each may run in a working directory and with settings of its own.

The shared services of the machine are never stopped or restarted.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path("/usr/lib/postgresql/15/bin")
#: Seconds any server or process gets to start or stop on a busy 2-core machine.
START_TIMEOUT_S = 90


def free_port() -> int:
    """A TCP port nothing listens on right now (the kernel's pick for port 0), on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(
    what: str, check: Callable[[], object], timeout_s: float = START_TIMEOUT_S, every_s: float = 0.2
):  # noqa: ANN201
    """Poll ``check`` until it returns a true value (returned) or raise ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout_s
    last_error: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
        except Exception as exc:  # noqa: BLE001 - a server still starting answers with errors
            last_error = exc
        else:
            if value:
                return value
        time.sleep(every_s)
    raise TimeoutError(f"{what}: not within {timeout_s:.0f} s (last error: {last_error!r})")


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


class PostgresServer:
    """A PostgreSQL 15 cluster in a temporary folder, listening on 127.0.0.1:``port`` only."""

    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError(f"PostgreSQL 15 binaries not found in {PG_BIN}")
        self.base = Path(tempfile.mkdtemp(prefix="casebook-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.base, "postgres", "postgres")
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        self.port = free_port()
        subprocess.run(
            _as_postgres(
                [str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]
                + ["--no-sync", "--no-instructions"]
            ),
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT_S,
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.base} "
            # A test cluster: durability is not what is tested, speed on a busy disk is welcome.
            "-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
        )
        subprocess.run(
            _as_postgres(
                [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options]
                + ["-w", "-t", str(START_TIMEOUT_S), "start"]
            ),
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT_S + 10,
        )

    def stop(self, mode: str = "fast") -> None:
        """``fast``: every session is ended (what a restart does to the connections of a worker)."""
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"]),
            check=False,
            capture_output=True,
            timeout=START_TIMEOUT_S,
        )

    def create_database(self, name: str) -> None:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)


class Process:
    """A command in its own process group (``start_new_session``), output to ``log``."""

    def __init__(
        self, name: str, args: list[str], *, env: dict[str, str], log: Path, cwd: Path = ROOT
    ) -> None:
        self.name = name
        self.log = log
        self._log_fh = log.open("ab")
        self.popen = subprocess.Popen(
            args,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=self._log_fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pgid(self) -> int:
        return self.popen.pid  # the leader of its own session and group

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill9(self) -> None:
        """SIGKILL to the whole group at once: the process and every child it started; returns once
        every process of the group is gone."""
        os.killpg(self.pgid, signal.SIGKILL)
        self.popen.wait(timeout=30)
        wait_for(
            f"every process of {self.name} gone", lambda: not live_group_members(self.pgid), timeout_s=30
        )

    def stop(self, timeout_s: float = 30) -> None:
        """SIGTERM to the group, SIGKILL to what is left after ``timeout_s``."""
        if self.alive():
            try:
                os.killpg(self.pgid, signal.SIGTERM)
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
            except ProcessLookupError:
                pass
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.alive():
            self.popen.wait(timeout=30)
        self._log_fh.close()

    def text(self) -> str:
        return self.log.read_text(errors="replace")


def process_environ(pid: int, *, timeout: float = 30.0) -> dict[str, str]:
    """The environment process ``pid`` started with (/proc/PID/environ); {} once it has ended.

    A process whose execve(2) has closed its close-on-exec descriptors (so ``subprocess.Popen`` has
    returned) may not have its new stack in place yet: its environ and cmdline read empty for that
    moment. This waits, up to ``timeout`` seconds, for a process still running to show its cmdline."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace")
            shown = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return {}
        if shown or state in {"Z", "X"} or time.monotonic() > deadline:
            return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
        time.sleep(0.01)


def live_group_members(pgid: int) -> list[int]:
    """Pids of processes of group ``pgid`` that still run (zombies waiting for a parent excluded)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            found.append(int(stat.parent.name))
    return found


class RedisServer:
    """``redis-server`` on 127.0.0.1:``port``; nothing kept on disk, so a restart empties it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.process: Process | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", str(self.workdir)]
        self.process = Process("redis", args, env=dict(os.environ), log=self.workdir / "redis.log")
        wait_for(f"redis on port {self.port}", self.ping)

    def ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


class MariaDBServer:
    """A MariaDB in a temporary folder on 127.0.0.1:``port`` and ``base/mysqld.sock``; root has no
    password. ``options``: more ``mariadbd`` options. Needs ``mariadb-install-db`` and ``mariadbd`` on
    the PATH or in /usr/sbin (``available``)."""

    def __init__(self, *options: str) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="casebook-mariadb-"))
        self.port = free_port()
        self.socket = self.base / "mysqld.sock"
        self.options = options
        self.process: Process | None = None

    @staticmethod
    def binary(name: str) -> str | None:
        """The path of ``name`` (``mariadbd``, ``mariadb-install-db``), or None when not installed."""
        return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")

    @classmethod
    def available(cls) -> bool:
        return all(cls.binary(n) for n in ("mariadbd", "mariadb-install-db", "mariadb"))

    def client_args(self) -> list[str]:
        """The ``mariadb`` client's connection options (TCP, as a customer's collector connects)."""
        return ["-uroot", "-h127.0.0.1", f"-P{self.port}"]

    def query(self, sql: str) -> str:
        """``sql`` run by the ``mariadb`` client in batch mode: its tab-separated rows, no header."""
        done = subprocess.run(
            [str(self.binary("mariadb")), *self.client_args(), "-N", "-B", "-e", sql],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout

    def session(self, database: str) -> subprocess.Popen:
        """A ``mariadb`` client session on ``database`` reading statements from its stdin (write a line
        ending with ``;`` and flush: it runs at once); it lasts until its stdin closes or the server stops."""
        return subprocess.Popen(
            [str(self.binary("mariadb")), *self.client_args(), database],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def start(self) -> None:
        data = self.base / "data"
        user = ["--user=root"] if os.geteuid() == 0 else []
        subprocess.run(
            [str(self.binary("mariadb-install-db")), "--no-defaults", f"--datadir={data}", *user]
            + ["--auth-root-authentication-method=normal", "--skip-test-db"],
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT_S,
        )
        args = [str(self.binary("mariadbd")), "--no-defaults", f"--datadir={data}", *user]
        args += [f"--socket={self.socket}", f"--port={self.port}", "--bind-address=127.0.0.1"]
        args += [f"--pid-file={self.base / 'mysqld.pid'}", "--innodb-buffer-pool-size=32M"]
        args += ["--skip-log-bin", *self.options]
        self.process = Process("mariadbd", args, env=dict(os.environ), log=self.base / "server.log")
        wait_for(f"mariadbd on port {self.port}", lambda: self.query("SELECT 1").strip() == "1")

    def stop(self) -> None:
        """Stops the server (its client sessions end with it) and removes its folder."""
        if self.process is not None:
            self.process.stop()
            self.process = None
        shutil.rmtree(self.base, ignore_errors=True)


class MotoServer:
    """moto's S3-compatible server on 127.0.0.1:``port`` (``.venv/bin/moto_server``); every bucket and
    object in its memory, gone when it stops. Any access key is accepted."""

    ACCESS_KEY, SECRET_KEY, REGION = "casebook-test", "casebook-test-secret", "us-east-1"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.process: Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The credentials and region a client of this server uses (boto3's variables)."""
        return {
            "AWS_ACCESS_KEY_ID": self.ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": self.SECRET_KEY,
            "AWS_DEFAULT_REGION": self.REGION,
        }

    def client(self):  # noqa: ANN201 - a boto3 S3 client
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=self.ACCESS_KEY,
            aws_secret_access_key=self.SECRET_KEY,
            region_name=self.REGION,
        )

    def start(self) -> None:
        args = [str(ROOT / ".venv" / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(self.port)]
        self.process = Process(
            "moto", args, env=dict(os.environ), log=self.workdir / "moto.log", cwd=self.workdir
        )
        wait_for(f"moto_server on port {self.port}", lambda: self.client().list_buckets() is not None)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key of ``bucket`` under ``prefix``."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


#: Fault-handling intervals for tests (seconds): a silent worker is noticed within about 15 s.
FAST_FAULTS = {
    "CASEBOOK_HEARTBEAT_INTERVAL": "2",
    "CASEBOOK_STALE_AFTER": "12",
    "CASEBOOK_SWEEP_INTERVAL": "3",
}


class CasebookProcesses:
    """Casebook's processes as ``scripts/start`` runs them, against ``database_url`` and ``redis_url``."""

    def __init__(
        self, workdir: Path, *, database_url: str, redis_url: str, media_root: Path, **env: str
    ) -> None:
        self.workdir = workdir
        self.queue = f"casebook-faults-{os.getpid()}-{free_port()}"
        self.web_port = free_port()
        self.user, self.password = "faults-engineer", "faults-engineer-password-1"
        self.env = {
            **os.environ,
            "CASEBOOK_DATABASE_URL": database_url,
            "CASEBOOK_REDIS_URL": redis_url,
            "CASEBOOK_QUEUE": self.queue,
            "CASEBOOK_MEDIA_ROOT": str(media_root),
            "CASEBOOK_BIND": f"127.0.0.1:{self.web_port}",
            "CASEBOOK_WEB_WORKERS": "2",
            "CASEBOOK_WORKER_CONCURRENCY": "1",
            "CASEBOOK_PARSE_PROCESSES": "1",
            "CASEBOOK_BEAT_SCHEDULE_FILE": str(workdir / "celerybeat-schedule"),
            "CASEBOOK_LOG_FORMAT": "json",
            "CASEBOOK_ADMIN_USER": self.user,
            "CASEBOOK_ADMIN_PASSWORD": self.password,
            **FAST_FAULTS,
            **env,
        }
        self.processes: list[Process] = []
        self._api_token: str | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def start(
        self, role: str, name: str | None = None, *, cwd: Path = ROOT, env: dict[str, str] | None = None
    ) -> Process:
        """``scripts/start role`` as process ``name`` (its log: ``workdir/<name>.log``), in the working
        directory ``cwd``, with ``env`` over the stack's settings."""
        name = name or role
        process = Process(
            name,
            [str(ROOT / "scripts" / "start"), role],
            env={**self.env, **(env or {})},
            log=self.workdir / f"{name}.log",
            cwd=cwd,
        )
        self.processes.append(process)
        return process

    def run(self, role: str, *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
        """A one-shot role (``migrate``), to its end."""
        process = self.start(role, cwd=cwd, env=env)
        code = process.popen.wait(timeout=START_TIMEOUT_S * 2)
        process.stop()
        if code != 0:
            raise RuntimeError(f"scripts/start {role} exited {code}:\n{process.text()[-3000:]}")

    def api_headers(self) -> dict[str, str]:
        """The ``Authorization`` header of an API token of the engineer (``manage.py create_api_token``,
        run once, after ``migrate`` created the account)."""
        if self._api_token is None:
            made = subprocess.run(
                [str(ROOT / ".venv" / "bin" / "python"), "manage.py", "create_api_token", self.user],
                cwd=ROOT,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT_S,
                check=True,
            )
            self._api_token = made.stdout.strip()
        return {"Authorization": f"Bearer {self._api_token}"}

    def upload(self, path: Path, title: str):  # noqa: ANN201 - a requests.Response
        """``POST /api/cases/`` of the bundle at ``path`` with the engineer's API token."""
        import requests

        with path.open("rb") as fh:
            return requests.post(
                f"{self.base_url}/api/cases/",
                headers=self.api_headers(),
                files={"bundle": (path.name, fh)},
                data={"title": title},
                timeout=60,
            )

    def engineer_session(self):  # noqa: ANN201 - a logged-in requests.Session
        """A browser-like session of the engineer, logged in through the login form."""
        return self.login_session(self.user, self.password)

    def login_session(self, username: str, password: str):  # noqa: ANN201 - a logged-in requests.Session
        """A browser-like session of ``username``, logged in through the login form."""
        import requests

        session = requests.Session()
        session.get(f"{self.base_url}/accounts/login/", timeout=30)
        answer = session.post(
            f"{self.base_url}/accounts/login/",
            data={
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": session.cookies["csrftoken"],
            },
            headers={"Referer": f"{self.base_url}/accounts/login/"},
            timeout=30,
        )
        assert answer.ok and "sessionid" in session.cookies
        return session

    def start_web(self, *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Process:
        import requests

        web = self.start("web", cwd=cwd, env=env)
        wait_for("the web's /healthz", lambda: requests.get(f"{self.base_url}/healthz", timeout=5).ok)
        return web

    def stop_all(self) -> None:
        for process in reversed(self.processes):
            process.stop()
