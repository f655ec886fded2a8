"""URL routes of the web UI and the API."""

from django.urls import path

urlpatterns: list = []
