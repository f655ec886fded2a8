"""The trends page's range picker and team filter (GET); every field optional."""

from __future__ import annotations

from django import forms

from web.trends.selectors import DEFAULT_WEEKS, RANGE_WEEKS


class TrendsForm(forms.Form):
    """``weeks``: the last 4, 13 or 52 weeks; ``since``/``until`` (UTC days) override it; ``team``: one
    of the user's teams (the choices), or all of them; ``by``: weeks or days."""

    weeks = forms.TypedChoiceField(
        choices=[(w, f"last {w} weeks") for w in RANGE_WEEKS],
        coerce=int,
        required=False,
        initial=DEFAULT_WEEKS,
        label="Range",
    )
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))
    team = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="Team")
    by = forms.ChoiceField(choices=[("week", "weeks"), ("day", "days")], required=False, label="Count by")

    def __init__(self, *args, teams: list[tuple[int, str]], **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.fields["team"].choices = [("", "all my teams"), *teams]
