"""The pages' side of notifications: a team admin's webhooks (add, remove, send a test, the delivery
log) and ticket link template on the team page, and a user's mail preference on the settings page.
Thin: access (``teams.team_for_admin``: another team answers 404), one service, a message.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_POST

from web.accounts import teams
from web.models import Team, WebhookDelivery
from web.notifications import services, tickets, webhooks

#: Session key holding a just-made webhook's secret until the team page has shown it once.
NEW_SECRET_SESSION_KEY = "casebook_new_webhook_secret"
#: Lines of the delivery log shown per webhook.
LOG_LINES = 20


class WebhookForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="e.g. #db-oncall in Slack.")
    url = forms.CharField(
        max_length=500, label="URL", help_text="http:// or https://; receives a signed JSON POST."
    )
    on_ready = forms.BooleanField(required=False, initial=True, label="When a case is ready")
    on_failed = forms.BooleanField(required=False, initial=True, label="When a case failed")
    send_hosts = forms.BooleanField(required=False, initial=True, label="Send host names")


class TicketTemplateForm(forms.Form):
    ticket_url_template = forms.CharField(
        max_length=tickets.MAX_TEMPLATE_CHARS,
        required=False,
        label="Ticket URL template",
        help_text="e.g. https://tickets.example.com/browse/{ticket}; empty: tickets are not links.",
    )


def team_context(request: HttpRequest, team: Team) -> dict[str, object]:
    """The team page's notification parts (templates/teams/_notifications.html)."""
    hooks = []
    for hook in team.webhooks.all():
        hooks.append(
            {
                "id": hook.pk,
                "name": hook.name,
                "origin": webhooks.url_origin(hook.url),  # the rest of the URL may be a secret
                "events": [e for e, on in (("ready", hook.on_ready), ("failed", hook.on_failed)) if on],
                "send_hosts": hook.send_hosts,
                "created_at": hook.created_at,
                "deliveries": list(WebhookDelivery.objects.filter(webhook=hook)[:LOG_LINES]),
            }
        )
    return {
        "webhooks": hooks,
        "webhook_form": WebhookForm(),
        "new_webhook_secret": request.session.pop(NEW_SECRET_SESSION_KEY, None),
        "ticket_form": TicketTemplateForm(initial={"ticket_url_template": team.ticket_url_template}),
    }


def _team(request: HttpRequest, team_id: int) -> Team:
    team = teams.team_for_admin(request.user, team_id)
    if team is None:
        raise Http404
    return team


@login_required
@require_POST
def webhook_add(request: HttpRequest, team_id: int) -> HttpResponse:
    team = _team(request, team_id)
    form = WebhookForm(request.POST)
    if not form.is_valid():
        messages.warning(request, "Give the webhook's URL.")
        return redirect("team-page", team_id=team.pk)
    data = form.cleaned_data
    try:
        hook, secret = services.webhook_create(
            team=team,
            name=data["name"],
            url=data["url"],
            on_ready=data["on_ready"],
            on_failed=data["on_failed"],
            send_hosts=data["send_hosts"],
            request=request,
        )
    except ValueError as exc:  # WebhookUrlError too
        messages.warning(request, str(exc))
        return redirect("team-page", team_id=team.pk)
    request.session[NEW_SECRET_SESSION_KEY] = {"id": hook.pk, "name": hook.name, "secret": secret}
    return redirect(f"/teams/{team.pk}/#team-webhooks")


def _on_webhook(request: HttpRequest, team_id: int, webhook_id: int, service, done: str) -> HttpResponse:  # noqa: ANN001
    """Run ``service`` (web/notifications/services.py) on a webhook of the admin's team; back to its list."""
    team = _team(request, team_id)
    if service(team=team, webhook_id=webhook_id, request=request):
        messages.success(request, done)
    else:
        messages.warning(request, "No such webhook.")
    return redirect(f"/teams/{team.pk}/#team-webhooks")


@login_required
@require_POST
def webhook_delete(request: HttpRequest, team_id: int, webhook_id: int) -> HttpResponse:
    return _on_webhook(request, team_id, webhook_id, services.webhook_delete, "The webhook is removed.")


@login_required
@require_POST
def webhook_test(request: HttpRequest, team_id: int, webhook_id: int) -> HttpResponse:
    return _on_webhook(
        request,
        team_id,
        webhook_id,
        services.webhook_send_test,
        "A test delivery is queued: its result appears in the delivery log.",
    )


@login_required
@require_POST
def ticket_template_set(request: HttpRequest, team_id: int) -> HttpResponse:
    team = _team(request, team_id)
    form = TicketTemplateForm(request.POST)
    try:
        if not form.is_valid():
            raise tickets.TicketTemplateError("The template is too long.")
        services.team_set_ticket_template(
            team=team, template=form.cleaned_data["ticket_url_template"], request=request
        )
    except tickets.TicketTemplateError as exc:
        messages.warning(request, str(exc))
    else:
        messages.success(request, "Ticket links saved.")
    return redirect("team-page", team_id=team.pk)


def settings_context(request: HttpRequest) -> dict[str, object]:
    """The settings page's mail preference (templates/account/_notifications.html)."""
    return {"email_case_done": services.email_case_done(request.user)}


@login_required
@require_POST
def email_preference_set(request: HttpRequest) -> HttpResponse:
    on = request.POST.get("email_case_done") == "on"
    services.set_email_case_done(user=request.user, on=on)
    messages.success(
        request,
        "You will get an e-mail when your uploads are analyzed."
        if on
        else "No more e-mails about your uploads.",
    )
    return redirect("user-settings")


def urlpatterns() -> list:
    return [
        path("teams/<int:team_id>/webhooks/", webhook_add, name="team-webhook-add"),
        path(
            "teams/<int:team_id>/webhooks/<int:webhook_id>/delete/",
            webhook_delete,
            name="team-webhook-delete",
        ),
        path("teams/<int:team_id>/webhooks/<int:webhook_id>/test/", webhook_test, name="team-webhook-test"),
        path("teams/<int:team_id>/ticket-template/", ticket_template_set, name="team-ticket-template"),
        path("settings/notifications/", email_preference_set, name="user-notifications"),
    ]
