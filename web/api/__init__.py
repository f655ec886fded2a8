"""The JSON API (Django REST framework): cases, findings, moments and share links."""
