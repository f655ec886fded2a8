# One image for every Casebook process. docker-compose.yml runs it as web, worker, beat and the
# one-shot migrations; each is `scripts/start ROLE`, the same command scripts/run uses on a machine.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies at build time, in their own layer (rebuilt only when requirements.txt changes): the
# runtime part of the pinned list, everything above its "# Tests and tooling" line.
COPY requirements.txt ./
RUN python -m venv /app/.venv \
 && sed '/^# Tests and tooling/,$d' requirements.txt > /tmp/runtime-requirements.txt \
 && /app/.venv/bin/pip install -r /tmp/runtime-requirements.txt \
 && rm /tmp/runtime-requirements.txt

COPY . .

# Static files collected into the image (served by WhiteNoise); var/ is where uploads and the beat
# schedule live: the only place the app writes, owned by an unprivileged user.
# The project's bytecode too (PYTHONDONTWRITEBYTECODE: nothing is written at run time), so that the
# parse processes each ingest starts do not compile the parsers and the analysis again.
RUN CASEBOOK_SECRET_KEY=collectstatic-only /app/.venv/bin/python manage.py collectstatic --noinput -v 0 \
 && /app/.venv/bin/python -m compileall -q analyzer parsers web \
 && useradd --system --uid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin casebook \
 && mkdir -p /app/var/media \
 && chown -R casebook:casebook /app/var

USER casebook

ENV CASEBOOK_BIND=0.0.0.0:8000 \
    CASEBOOK_MEDIA_ROOT=/app/var/media \
    CASEBOOK_STATIC_ROOT=/app/var/staticfiles
EXPOSE 8000

ENTRYPOINT ["scripts/start"]
CMD ["web"]
