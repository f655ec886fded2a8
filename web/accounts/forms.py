"""Forms of the settings page."""

from __future__ import annotations

from django import forms


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. “nightly upload script on build-3”."
    )
