"""Casebook settings: one module fed by small typed environment helpers.

Every value that differs between machines comes from the environment; a malformed value raises
``ImproperlyConfigured`` at start-up instead of being silently ignored.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote, urlparse

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off", ""):
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false)")


def envint(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from exc


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name, default).strip().lower()
    if raw not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of {', '.join(choices)}")
    return raw


def envseconds(name: str, default: int, *, minimum: int = 1) -> int:
    value = envint(name, default)
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum} (seconds)")
    return value


def _database(url: str) -> dict[str, object]:
    parsed = urlparse(url)
    if parsed.scheme not in ("postgres", "postgresql"):
        raise ImproperlyConfigured(f"CASEBOOK_DATABASE_URL must be postgres://..., got {url!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parsed.path.lstrip("/") or "casebook",
        "USER": parsed.username or "postgres",
        "PASSWORD": parsed.password or "",
        "HOST": parsed.hostname or "127.0.0.1",
        "PORT": str(parsed.port or 5432),
        "CONN_MAX_AGE": 60,
        # A connection kept from an earlier request is pinged before reuse: after a database restart
        # the first request reconnects instead of failing.
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {"connect_timeout": 5},
        "TEST": {"NAME": "test_" + (parsed.path.lstrip("/") or "casebook")},
    }


#: S3 bucket names (AWS rules: 3-63 lower-case letters, digits, dots and hyphens).
S3_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def _storage(url: str, media_root: Path) -> tuple[dict[str, object], Path]:
    """Django's default storage for ``CASEBOOK_STORAGE_URL`` and the media root that goes with it.

    ``file:///absolute/path``: ``FileSystemStorage`` in that folder. ``s3://bucket/prefix``:
    django-storages' ``S3Storage`` (keys under ``prefix/``), with ``CASEBOOK_S3_ENDPOINT_URL`` (an
    S3-compatible server; path-style addressing then), ``CASEBOOK_S3_REGION`` (else
    ``AWS_DEFAULT_REGION``, else boto3's own lookup) and credentials from boto3's chain
    (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, a profile, an instance role). Raises
    ``ImproperlyConfigured`` naming the variable for anything else.
    """
    name = "CASEBOOK_STORAGE_URL"
    parsed = urlparse(url)
    if parsed.query or parsed.fragment or parsed.params:
        raise ImproperlyConfigured(f"{name}={url!r}: no query or fragment is allowed")
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost") or not parsed.path.startswith("/"):
            raise ImproperlyConfigured(f"{name}={url!r}: use file:///absolute/path")
        root = Path(unquote(parsed.path))
        # No location option: FileSystemStorage follows MEDIA_ROOT (and a test's override of it).
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}, root
    if parsed.scheme != "s3":
        raise ImproperlyConfigured(f"{name}={url!r}: use file:///absolute/path or s3://bucket/prefix")
    if not S3_BUCKET.match(parsed.netloc or "") or ".." in parsed.netloc:
        raise ImproperlyConfigured(f"{name}={url!r}: {parsed.netloc!r} is not an S3 bucket name")
    prefix = parsed.path.strip("/")
    if "//" in prefix or any(part in (".", "..") for part in prefix.split("/")):
        raise ImproperlyConfigured(f"{name}={url!r}: the prefix {prefix!r} is not a plain key prefix")
    endpoint = envstr("CASEBOOK_S3_ENDPOINT_URL", "") or None
    if endpoint is not None:
        end = urlparse(endpoint)
        if end.scheme not in ("http", "https") or not end.hostname or end.path not in ("", "/"):
            raise ImproperlyConfigured(
                f"CASEBOOK_S3_ENDPOINT_URL={endpoint!r}: use http(s)://host[:port] of an S3-compatible server"
            )
    options: dict[str, object] = {
        "bucket_name": parsed.netloc,
        "location": prefix,
        "endpoint_url": endpoint,
        "region_name": envstr("CASEBOOK_S3_REGION", "") or os.environ.get("AWS_DEFAULT_REGION") or None,
        # A second upload of the same name gets a name of its own; nothing is public: every object
        # is read through Django (the bundle download streams it after the access checks).
        "file_overwrite": False,
        "default_acl": None,
        "querystring_auth": True,
        "addressing_style": "path" if endpoint else None,
    }
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}, media_root


DEBUG = envbool("CASEBOOK_DEBUG", False)
SECRET_KEY = os.environ.get("CASEBOOK_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and envbool("CASEBOOK_REQUIRE_SECRET", False):
        raise ImproperlyConfigured("CASEBOOK_SECRET_KEY is required")
    # Development and tests only: the run script writes a real key into .env on first start.
    SECRET_KEY = "casebook-insecure-development-key-change-me-0123456789"
ALLOWED_HOSTS = envlist("CASEBOOK_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = envlist("CASEBOOK_CSRF_TRUSTED_ORIGINS", "")

# Production behind HTTPS (README, "Production"): CASEBOOK_HTTPS=1 turns on the redirect to https,
# HSTS and secure cookies; CASEBOOK_BEHIND_PROXY=1 trusts the proxy's X-Forwarded-Proto. The health
# endpoints answer over plain HTTP whatever the host name (web/health.py), for the orchestrator's probes.
CASEBOOK_HTTPS = envbool("CASEBOOK_HTTPS", False)
SECURE_SSL_REDIRECT = CASEBOOK_HTTPS
SESSION_COOKIE_SECURE = CASEBOOK_HTTPS
CSRF_COOKIE_SECURE = CASEBOOK_HTTPS
SECURE_HSTS_SECONDS = envint("CASEBOOK_HSTS_SECONDS", 31_536_000 if CASEBOOK_HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("CASEBOOK_HSTS_INCLUDE_SUBDOMAINS", CASEBOOK_HTTPS)
SECURE_HSTS_PRELOAD = envbool("CASEBOOK_HSTS_PRELOAD", CASEBOOK_HTTPS)
CASEBOOK_BEHIND_PROXY = envbool("CASEBOOK_BEHIND_PROXY", False)
if CASEBOOK_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
PUBLIC_URL = envstr("CASEBOOK_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "web.admin_site.CasebookAdminConfig",  # django.contrib.admin, for site admins only
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",  # full-text search and trigram lookups (web/history/search.py)
    "axes",  # repeated failed logins throttled (below)
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our own static files (strict CSP, no CDN)
    "web",
]

MIDDLEWARE = [
    "web.health.HealthMiddleware",  # first: probes need no host check, redirect, session or database
    "web.logs.RequestLogMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "web.health.DatabaseUnavailableMiddleware",  # a 503 that says so while PostgreSQL is away
    "axes.middleware.AxesMiddleware",  # last: answers a locked-out login with the lockout page
]

ROOT_URLCONF = "web.urls"
WSGI_APPLICATION = "web.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "web.accounts.team_views.team_menu",  # the user menu's team admin links
            ],
        },
    },
]

DATABASES = {
    "default": _database(envstr("CASEBOOK_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casebook"))
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # django-axes first: it refuses a login attempt of a locked-out username from that address.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Failed logins: after CASEBOOK_LOGIN_FAILURE_LIMIT failures for one username from one address, that
# pair is locked out for CASEBOOK_LOGIN_COOLOFF_MINUTES (429 and a page that says so); a success resets
# the count. Admins unlock earlier in the admin (Axes: access attempts) or `manage.py axes_reset`.
AXES_FAILURE_LIMIT = envint("CASEBOOK_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=envint("CASEBOOK_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False

# E-mail (password reset, case notifications): written to files under var/mail/ (owner-only, web/mail.py)
# unless an SMTP server is configured; never to the console, whose output is a log.
EMAIL_BACKEND = envstr("CASEBOOK_EMAIL_BACKEND", "web.mail.PrivateFileBackend")
EMAIL_FILE_PATH = envstr("CASEBOOK_EMAIL_DIR", str(BASE_DIR / "var" / "mail"))
EMAIL_HOST = envstr("CASEBOOK_EMAIL_HOST", "localhost")
EMAIL_PORT = envint("CASEBOOK_EMAIL_PORT", 25)
EMAIL_HOST_USER = envstr("CASEBOOK_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = envstr("CASEBOOK_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = envbool("CASEBOOK_EMAIL_TLS", False)
DEFAULT_FROM_EMAIL = envstr("CASEBOOK_EMAIL_FROM", "casebook@localhost")

# Team webhooks (web/notifications/webhooks.py): a delivery's timeout, its attempts and the first
# retry's delay (doubled at each retry), and whether a webhook may point at a private address.
CASEBOOK_WEBHOOK_TIMEOUT_S = envseconds("CASEBOOK_WEBHOOK_TIMEOUT_S", 10)
CASEBOOK_WEBHOOK_ATTEMPTS = envint("CASEBOOK_WEBHOOK_ATTEMPTS", 6)
CASEBOOK_WEBHOOK_BACKOFF_S = envseconds("CASEBOOK_WEBHOOK_BACKOFF_S", 30)
CASEBOOK_WEBHOOK_ALLOW_PRIVATE = envbool("CASEBOOK_WEBHOOK_ALLOW_PRIVATE", False)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "case-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(envstr("CASEBOOK_STATIC_ROOT", str(BASE_DIR / "var" / "staticfiles")))
# Where uploads and the fan-out's work files are kept (docs/storage.md): CASEBOOK_STORAGE_URL is
# file:///path (the default: CASEBOOK_MEDIA_ROOT, else var/media) or s3://bucket/prefix, read and
# written through Django's storage API only, so that workers on other hosts share it.
MEDIA_ROOT = Path(envstr("CASEBOOK_MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
CASEBOOK_STORAGE_URL = envstr("CASEBOOK_STORAGE_URL", "") or MEDIA_ROOT.resolve().as_uri()
_default_storage, MEDIA_ROOT = _storage(CASEBOOK_STORAGE_URL, MEDIA_ROOT)
STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Uploads: bundles are streamed to a temporary file, never held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
CASEBOOK_MAX_UPLOAD_BYTES = envint("CASEBOOK_MAX_UPLOAD_BYTES", 4 * 1024**3)
# Bytes per request the browser sends through an upload link (web/uploads/): a broken connection
# costs at most this much again; a proxy in front must take a request body of this size.
CASEBOOK_UPLOAD_CHUNK_BYTES = envint("CASEBOOK_UPLOAD_CHUNK_BYTES", 8 * 1024**2)
# Archive limits (a decompression bomb stops here; see parsers/ingest/archive.py).
CASEBOOK_MAX_MEMBERS = envint("CASEBOOK_MAX_MEMBERS", 5000)
CASEBOOK_MAX_UNCOMPRESSED_BYTES = envint("CASEBOOK_MAX_UNCOMPRESSED_BYTES", 16 * 1024**3)
CASEBOOK_MAX_RATIO = envint("CASEBOOK_MAX_RATIO", 200)
# Processes that parse the pieces of a large capture in parallel during an ingest (parsers/ingest/pool.py);
# 0 parses everything in the worker process itself. Started only for members of two pieces or more.
CASEBOOK_PARSE_PROCESSES = envint("CASEBOOK_PARSE_PROCESSES", os.cpu_count() or 1)
# MiB each parse process may hold (its data segment, RLIMIT_DATA; 0: no limit): a member whose parse
# needs more is not used, with that reason, and the rest of the bundle is read. A piece of 8 MiB
# needs 100-250 MB; an hour's generated bundle peaked at 225 MiB per process (docs/operations.md).
CASEBOOK_PARSE_MEMORY_MB = envint("CASEBOOK_PARSE_MEMORY_MB", 2048)
# Fan-out (web/ingest/fanout.py): the parts of one bundle's parse become Celery tasks that any worker of any
# host takes (a chord joins them for the analysis); the upload and the parts are read through Django's
# storage, so every worker host must share it (CASEBOOK_STORAGE_URL: a shared volume, or S3).
CASEBOOK_INGEST_FANOUT = envbool("CASEBOOK_INGEST_FANOUT", False)
# Bytes of capture text per fan-out task (several pieces of 4-8 MiB of one member).
CASEBOOK_FANOUT_PART_BYTES = envint("CASEBOOK_FANOUT_PART_BYTES", 64 << 20)

# Celery: Redis broker; results are not kept (tasks write their outcome to PostgreSQL), but for a
# fan-out's chord.
CELERY_BROKER_URL = envstr("CASEBOOK_REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_TASK_IGNORE_RESULT = True
# A chord (the fan-out) counts its finished parts in the result backend; only its tasks keep results.
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = envseconds("CASEBOOK_TASK_SOFT_TIME_LIMIT", 3600)
CELERY_TASK_TIME_LIMIT = envseconds("CASEBOOK_TASK_TIME_LIMIT", 3900)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("CASEBOOK_TASK_TIME_LIMIT must be above CASEBOOK_TASK_SOFT_TIME_LIMIT")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None  # a worker waits for Redis for as long as it takes
# Redis hands an unacknowledged message (acks_late) to another worker after this long: above the
# hard time limit, so a task still running is never handed out twice; a task whose worker died
# sooner is taken back by the sweeper (below), not by this timeout.
CASEBOOK_VISIBILITY_MARGIN_S = 300
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + CASEBOOK_VISIBILITY_MARGIN_S
}
# When Redis goes away a running ingest goes on (it reports to PostgreSQL, not to Redis) and ends;
# its acknowledgement may be lost with Redis, and a redelivered copy then finds the case done.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Sending a task while Redis is down fails after about 1.5 s instead of holding an upload request;
# the case then says it will be queued when Redis is back, and the sweeper sends it.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 1,
}
CELERY_TASK_DEFAULT_QUEUE = envstr("CASEBOOK_QUEUE", "casebook")
CELERY_WORKER_HIJACK_ROOT_LOGGER = False  # the worker logs through LOGGING below (web/celery.py)

# Fault handling (web/ingest/claims.py, web/ingest/sweeper.py). A worker processing a case stamps it every
# HEARTBEAT_INTERVAL s; one silent for STALE_AFTER s is taken to be dead (a loaded host can delay a
# beat by seconds: several beats must be missed). Celery beat runs the sweeper every SWEEP_INTERVAL
# s; a case is taken back at most MAX_REQUEUES times, then fails with the reason. A queued case whose
# task was sent more than QUEUED_RESEND_AFTER s ago is sent again (its message may have been lost).
CASEBOOK_HEARTBEAT_INTERVAL = envseconds("CASEBOOK_HEARTBEAT_INTERVAL", 10)
CASEBOOK_STALE_AFTER = envseconds("CASEBOOK_STALE_AFTER", 60)
CASEBOOK_SWEEP_INTERVAL = envseconds("CASEBOOK_SWEEP_INTERVAL", 20)
# 1: a case whose ingest kills or exhausts its worker twice is FAILED, never claimed a third time.
CASEBOOK_MAX_REQUEUES = envseconds("CASEBOOK_MAX_REQUEUES", 1, minimum=0)
CASEBOOK_QUEUED_RESEND_AFTER = envseconds("CASEBOOK_QUEUED_RESEND_AFTER", 900)
# The ingest's rules run in a forked child beside the publishing writes (web/ingest/pipeline.py):
# past this many seconds of waiting for it, the child is killed and the worker runs the rules itself.
CASEBOOK_RULES_CHILD_TIMEOUT_S = envseconds("CASEBOOK_RULES_CHILD_TIMEOUT_S", 600)
if CASEBOOK_STALE_AFTER < 3 * CASEBOOK_HEARTBEAT_INTERVAL:
    raise ImproperlyConfigured("CASEBOOK_STALE_AFTER must be at least 3 x CASEBOOK_HEARTBEAT_INTERVAL")
CELERY_BEAT_SCHEDULE = {
    "sweep-cases": {
        "task": "casebook.sweep_cases",
        "schedule": float(CASEBOOK_SWEEP_INTERVAL),
        "options": {"expires": float(CASEBOOK_SWEEP_INTERVAL)},
    },
    "sweep-upload-links": {  # temporary files of uploads whose link expired or was revoked
        "task": "casebook.sweep_upload_links",
        "schedule": 3600.0,
        "options": {"expires": 3600.0},
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = envstr(
    "CASEBOOK_BEAT_SCHEDULE_FILE", str(BASE_DIR / "var" / "celerybeat-schedule")
)

# Django's cache on the same Redis as Celery (its own key prefix): the per-client count of unknown
# share tokens (web/sharing/views.py) must be shared by every web process.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": CELERY_BROKER_URL,
        "KEY_PREFIX": "casebook",
        "TIMEOUT": 300,
        # A Redis that is away costs a request at most a second (the callers go on without it).
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
}
# Share links (web/sharing/services.py): a client that asked for SHARE_GUESS_LIMIT unknown, expired or revoked
# tokens within SHARE_GUESS_WINDOW s gets 429 on every /s/ URL until the window is over.
CASEBOOK_SHARE_GUESS_LIMIT = envint("CASEBOOK_SHARE_GUESS_LIMIT", 20)
CASEBOOK_SHARE_GUESS_WINDOW = envseconds("CASEBOOK_SHARE_GUESS_WINDOW", 600)

# Password reset (web/throttles.py): at most RESET_LIMIT_PER_ACCOUNT requests for one e-mail address
# and RESET_LIMIT_PER_ADDRESS from one client address within RESET_WINDOW s; over either the answer
# is the same page, but no mail is sent (a mailbox is not flooded, accounts are not enumerated).
CASEBOOK_RESET_LIMIT_PER_ACCOUNT = envint("CASEBOOK_RESET_LIMIT_PER_ACCOUNT", 3)
CASEBOOK_RESET_LIMIT_PER_ADDRESS = envint("CASEBOOK_RESET_LIMIT_PER_ADDRESS", 10)
CASEBOOK_RESET_WINDOW = envseconds("CASEBOOK_RESET_WINDOW", 3600)

# The API takes a personal token (web/accounts/authentication.py: ``Authorization: Bearer cb_...``) or the
# browser's session (with its CSRF token); never the login password (no basic auth).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "web.accounts.authentication.ApiTokenAuthentication",  # first: a 401 says ``WWW-Authenticate: Bearer``
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "web.api.errors.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Casebook API",
    "DESCRIPTION": (
        "Upload diagnostic bundles, poll their analysis, read reports, findings, series and moments, "
        "list and search cases, compare two cases. Authenticate with a personal API token (made on "
        "your settings page): `Authorization: Bearer cb_...`."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,  # the upload's request body is its own (multipart) component
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two serializers have a "state" of their own values (share links, upload links).
    "ENUM_NAME_OVERRIDES": {
        "UploadLinkStateEnum": "web.api.upload_links.UPLOAD_LINK_STATES",
        "ShareStateEnum": ["active", "expired", "revoked"],
    },
}

# Strict Content Security Policy: no inline script or style, nothing from another origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

# Logs: one JSON object per line on stderr (web, worker, beat and gunicorn alike: web/logs.py), with
# the task and case a line is about; CASEBOOK_LOG_FORMAT=text for reading by eye.
CASEBOOK_LOG_FORMAT = envchoice("CASEBOOK_LOG_FORMAT", "json", ("json", "text"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Every handler masks secrets (web/logs.py SecretsFilter): share, reset and API tokens, sessions,
    # passwords.
    "filters": {"context": {"()": "web.logs.ContextFilter"}, "secrets": {"()": "web.logs.SecretsFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(process)d",
            "rename_fields": {"levelname": "level", "name": "logger", "process": "pid"},
            "timestamp": "time",
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": CASEBOOK_LOG_FORMAT,
            "filters": ["context", "secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": envstr("CASEBOOK_LOG_LEVEL", "INFO")},
    "loggers": {
        # gunicorn's own loggers go through the handler above (web/gunicorn_conf.py).
        "gunicorn.error": {"level": "INFO", "propagate": True},
        "gunicorn.access": {"level": "WARNING", "propagate": True},
        # django-axes logs every login at INFO; failures and lockouts (WARNING) are what matter.
        "axes": {"level": "WARNING", "propagate": True},
    },
}
