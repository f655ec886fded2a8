"""Casebook settings: one module fed by small typed environment helpers.

Every value that differs between machines comes from the environment; a malformed value raises
``ImproperlyConfigured`` at start-up instead of being silently ignored.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

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
        "TEST": {"NAME": "test_" + (parsed.path.lstrip("/") or "casebook")},
    }


DEBUG = envbool("CASEBOOK_DEBUG", False)
SECRET_KEY = os.environ.get("CASEBOOK_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and envbool("CASEBOOK_REQUIRE_SECRET", False):
        raise ImproperlyConfigured("CASEBOOK_SECRET_KEY is required")
    # Development and tests only: the run script writes a real key into .env on first start.
    SECRET_KEY = "casebook-insecure-development-key-change-me-0123456789"
ALLOWED_HOSTS = envlist("CASEBOOK_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = envlist("CASEBOOK_CSRF_TRUSTED_ORIGINS", "")
PUBLIC_URL = envstr("CASEBOOK_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
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
MEDIA_ROOT = Path(envstr("CASEBOOK_MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Uploads: bundles are streamed to a temporary file, never held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
CASEBOOK_MAX_UPLOAD_BYTES = envint("CASEBOOK_MAX_UPLOAD_BYTES", 4 * 1024**3)
# Archive limits (a decompression bomb stops here; see parsers/archive.py).
CASEBOOK_MAX_MEMBERS = envint("CASEBOOK_MAX_MEMBERS", 5000)
CASEBOOK_MAX_UNCOMPRESSED_BYTES = envint("CASEBOOK_MAX_UNCOMPRESSED_BYTES", 16 * 1024**3)
CASEBOOK_MAX_RATIO = envint("CASEBOOK_MAX_RATIO", 200)
# Processes that parse the pieces of a large capture in parallel during an ingest (parsers/pool.py);
# 0 parses everything in the worker process itself. Started only for members of two pieces or more.
CASEBOOK_PARSE_PROCESSES = envint("CASEBOOK_PARSE_PROCESSES", os.cpu_count() or 1)

# Celery: Redis broker; results are not kept (tasks write their outcome to PostgreSQL).
CELERY_BROKER_URL = envstr("CASEBOOK_REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = envint("CASEBOOK_TASK_SOFT_TIME_LIMIT", 3600)
CELERY_TASK_TIME_LIMIT = envint("CASEBOOK_TASK_TIME_LIMIT", 3900)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = envstr("CASEBOOK_QUEUE", "casebook")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {"TITLE": "Casebook API", "VERSION": "1", "SERVE_INCLUDE_SCHEMA": False}

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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("CASEBOOK_LOG_LEVEL", "INFO")},
}
