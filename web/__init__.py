"""Casebook's Django project and app: the only layer that touches the ORM, storage or Celery."""

from web.celery import app as celery_app

__all__ = ("celery_app",)
