"""Forms of the case pages: upload, details, and the case list's search and filters."""

from __future__ import annotations

from django import forms

from web.history.search import SEVERITIES, SORTS, CaseFilters
from web.models import CaseStatus, ResolutionCategory


class CaseUploadForm(forms.Form):
    title = forms.CharField(max_length=200, required=False, help_text="Customer, ticket or a few words.")
    bundle = forms.FileField(
        help_text=".tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .tar.zst, .zip, or a single capture file",
        allow_empty_file=False,
    )
    team = forms.IntegerField(required=False, widget=forms.HiddenInput)
    # An upload whose bytes the team has seen before is refused with a link to that case unless this
    # is set ("make a new case anyway").
    allow_duplicate = forms.BooleanField(
        required=False, label="Make a new case even if these bytes were uploaded before"
    )


class BundleAddForm(forms.Form):
    """Another bundle of the same incident, added to a case (the case page's "Add another host's bundle")."""

    bundle = forms.FileField(
        help_text="Another host's capture of the same minutes: the same formats as the first upload",
        allow_empty_file=False,
    )


class CaseDetailsForm(forms.Form):
    """What the engineers record about a case, edited on the case page."""

    title = forms.CharField(max_length=200, required=False)
    customer = forms.CharField(max_length=200, required=False, help_text="The customer's organisation.")
    ticket = forms.CharField(max_length=100, required=False, help_text="Ticket reference, e.g. ZD-4711.")
    tags = forms.CharField(max_length=1100, required=False, help_text="Comma-separated.")
    notes = forms.CharField(
        required=False, max_length=100_000, widget=forms.Textarea(attrs={"rows": 6}), help_text="Markdown."
    )

    def tag_list(self) -> list[str]:
        return [t for t in self.cleaned_data.get("tags", "").split(",") if t.strip()]


class ResolutionForm(forms.Form):
    """Closing a case: what fixed it and its category."""

    resolution = forms.CharField(
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="What fixed it, in Markdown: the next engineer with the same findings reads it.",
    )
    category = forms.ChoiceField(choices=ResolutionCategory.choices)


class CaseFilterForm(forms.Form):
    """The case list's search, filters and sort (GET); every field optional."""

    q = forms.CharField(max_length=500, required=False)
    customer = forms.CharField(max_length=200, required=False)
    host = forms.CharField(max_length=255, required=False)
    status = forms.ChoiceField(choices=[("", "any status"), *CaseStatus.choices], required=False)
    finding = forms.CharField(max_length=80, required=False, label="Finding key")
    severity = forms.ChoiceField(
        choices=[("", "any severity"), *((s, s) for s in SEVERITIES)], required=False
    )
    tag = forms.CharField(max_length=50, required=False)
    state = forms.ChoiceField(
        choices=[("", "open or closed"), ("open", "open"), ("closed", "closed")], required=False
    )
    date_from = forms.DateField(
        required=False, label="Captured from", widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        required=False, label="Captured to", widget=forms.DateInput(attrs={"type": "date"})
    )
    root_cause = forms.CharField(max_length=80, required=False, label="Root cause")
    uploaded_from = forms.DateField(
        required=False, label="Uploaded from", widget=forms.DateInput(attrs={"type": "date"})
    )
    uploaded_to = forms.DateField(
        required=False, label="Uploaded to", widget=forms.DateInput(attrs={"type": "date"})
    )
    team = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    sort = forms.ChoiceField(
        choices=[
            ("", "default"),
            ("-created", "newest upload"),
            ("created", "oldest upload"),
            ("-captured", "latest capture"),
            ("captured", "earliest capture"),
            ("host", "host"),
            ("customer", "customer"),
            ("title", "title"),
            ("status", "status"),
            ("relevance", "relevance (search)"),
        ],
        required=False,
    )

    def filters(self) -> CaseFilters:
        """The valid fields as ``CaseFilters`` (an invalid field is left out)."""
        data = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        sort = data.get("sort") or ""
        return CaseFilters(
            q=data.get("q") or "",
            customer=data.get("customer") or "",
            host=data.get("host") or "",
            status=data.get("status") or "",
            finding_key=data.get("finding") or "",
            severity=data.get("severity") or "",
            tag=data.get("tag") or "",
            state=data.get("state") or "",
            date_from=data.get("date_from"),
            date_to=data.get("date_to"),
            root_cause=data.get("root_cause") or "",
            uploaded_from=data.get("uploaded_from"),
            uploaded_to=data.get("uploaded_to"),
            team=data.get("team"),
            sort=sort if sort in SORTS else "",
        )
