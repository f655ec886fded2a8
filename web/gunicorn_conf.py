"""gunicorn settings for the web process (``gunicorn -c web/gunicorn_conf.py web.wsgi``; scripts/start).

From the environment: ``CASEBOOK_BIND`` (default ``127.0.0.1:$CASEBOOK_PORT``, port 8000),
``CASEBOOK_WEB_WORKERS`` (default 2), ``CASEBOOK_WEB_TIMEOUT`` (seconds, default 300: a large upload
is streamed to disk and hashed inside one request). gunicorn's own lines go through Casebook's
logging configuration, so they are JSON like the rest.
"""

import os

from web.settings import LOGGING

bind = os.environ.get("CASEBOOK_BIND") or f"127.0.0.1:{os.environ.get('CASEBOOK_PORT', '8000')}"
workers = int(os.environ.get("CASEBOOK_WEB_WORKERS", "2"))
timeout = int(os.environ.get("CASEBOOK_WEB_TIMEOUT", "300"))
graceful_timeout = 30
logconfig_dict = LOGGING
# Requests are logged by web.logs.RequestLogMiddleware (with the user and the duration).
accesslog = None


def post_worker_init(worker: object) -> None:
    """Each web worker reads the words a redacted share link may show (the parsers' and Casebook's own
    texts, ``web.sharing.redaction.allowlist.casebook_words``, about 2 s of CPU) in the background as
    it starts, rather than in a customer's first request."""
    import threading

    from web.sharing.redaction.allowlist import casebook_words

    threading.Thread(target=casebook_words, name="casebook-words", daemon=True).start()
