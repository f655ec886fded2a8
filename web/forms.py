"""Forms of the web UI."""

from django import forms


class CaseUploadForm(forms.Form):
    title = forms.CharField(max_length=200, required=False, help_text="Customer, ticket or a few words.")
    bundle = forms.FileField(
        help_text=".tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .tar.zst, .zip, or a single capture file",
        allow_empty_file=False,
    )


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. “nightly upload script on build-3”."
    )
