"""The form that makes an upload link (web/uploads/views.py)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator

from web.cases.selectors import teams_of
from web.uploads import services


class UploadLinkForm(forms.Form):
    customer = forms.CharField(max_length=200, required=False, help_text="The customer's organisation.")
    ticket = forms.CharField(max_length=100, required=False, help_text="Ticket reference, e.g. ZD-4711.")
    days = forms.IntegerField(min_value=1, max_value=services.MAX_DAYS, initial=services.DEFAULT_DAYS)
    uploads = forms.IntegerField(
        min_value=1, max_value=services.MAX_UPLOADS, initial=services.DEFAULT_UPLOADS, label="Uploads allowed"
    )
    max_size_mb = forms.FloatField(min_value=0.001, label="Largest upload (MiB)")
    team = forms.ModelChoiceField(queryset=None, empty_label=None)

    def __init__(self, *args, user=None, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        super().__init__(*args, **kwargs)
        mine = teams_of(user)
        self.fields["team"].queryset = mine
        if mine.count() > 1:  # a link is made for a team the engineer chooses, never the first by name
            self.fields["team"].empty_label = "Choose the team"
        limit_mb = settings.CASEBOOK_MAX_UPLOAD_BYTES / 1024 / 1024
        self.fields["max_size_mb"].validators.append(MaxValueValidator(limit_mb))
        self.fields["max_size_mb"].initial = round(limit_mb)
