"""Forms of the share links' pages."""

from __future__ import annotations

from django import forms


class ShareForm(forms.Form):
    """A new share link of a case (web/sharing/services.py): for whom, how long, what it redacts."""

    label = forms.CharField(
        max_length=200, required=False, help_text="Whom it is for (only engineers see this)."
    )
    days = forms.IntegerField(
        min_value=1, max_value=365, initial=30, help_text="Days before the link expires."
    )
    redact_literals = forms.BooleanField(required=False, initial=True, label="Query literals (shown as ?)")
    redact_hosts = forms.BooleanField(required=False, initial=True, label="Client hosts and IPs")
    redact_users = forms.BooleanField(required=False, initial=True, label="MySQL users")
    redact_schemas = forms.BooleanField(required=False, initial=True, label="Schema names")
    allow_bundle = forms.BooleanField(
        required=False, initial=False, label="Allow the raw bundle download (only without redaction)"
    )

    def clean(self) -> dict[str, object]:
        data = super().clean()
        redacted = any(
            data.get(f) for f in ("redact_literals", "redact_hosts", "redact_users", "redact_schemas")
        )
        if data.get("allow_bundle") and redacted:
            raise forms.ValidationError(
                "The raw bundle is the capture as taken: it can be allowed only on a link without redaction."
            )
        return data
