"""Teams and what an engineer or a team admin keeps: membership by invitation, personal API tokens,
the mail preference, a team's webhooks and their delivery log."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

#: The team of a small deployment: engineers made without ``--team`` and cases made without a user
#: (``manage.py analyze``) belong to it.
DEFAULT_TEAM_NAME = "Default"


class Team(models.Model):
    """A group of engineers who see and work on each other's cases, and nothing of other teams'
    (``web.cases.selectors.cases_for``). A case belongs to exactly one team."""

    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)
    # Team admins (web/accounts/teams.py): members who manage the team's members and see its share links,
    # API tokens and audit trail. Always members too (the services keep it so).
    admins = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="administered_teams", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Makes a case's ticket a link (web/notifications/tickets.py): an http(s) URL with ``{ticket}``.
    ticket_url_template = models.CharField(max_length=300, blank=True, db_default="")

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class InvitationState(models.TextChoices):
    """Where a team invitation stands (``TeamInvitation.state``)."""

    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    DECLINED = "declined", "Declined"
    WITHDRAWN = "withdrawn", "Withdrawn"


class TeamInvitation(models.Model):
    """A team admin's invitation of an engineer to his team (web/accounts/invitations.py): nothing
    becomes membership until the engineer accepts it on his settings page. A pending invitation
    answers until ``expires_at``; an answered one stays for the record. One pending invitation per
    team and engineer, and per team and address.

    Invited by user name, ``user`` is that account. Invited by e-mail, ``address`` is what the admin
    typed and ``user`` stays empty until an account holding that address answers (the admin never
    learns whether one does)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="team_invitations",
    )
    address = models.EmailField(max_length=254, blank=True, default="")
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    state = models.CharField(max_length=16, choices=InvitationState.choices, default=InvitationState.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            models.UniqueConstraint(
                fields=("team", "user"),
                condition=models.Q(state="pending"),
                name="one_pending_invitation_per_team_and_user",
            ),
            models.UniqueConstraint(
                Lower("address"),
                "team",
                condition=models.Q(state="pending") & ~models.Q(address=""),
                name="one_pending_invitation_per_team_and_address",
            ),
            models.CheckConstraint(
                condition=models.Q(user__isnull=False) | ~models.Q(address=""),
                name="invitation_names_a_user_or_an_address",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user or self.address} to {self.team} ({self.state})"


class ApiToken(models.Model):
    """A personal token for the JSON API (``Authorization: Bearer <token>``).

    Only the SHA-256 of the token is kept (``key_sha256``, hex): the token itself is shown once, when
    it is made, and cannot be read back. ``prefix`` (its first characters) tells tokens apart in the
    list. A revoked token (``revoked_at`` set) authenticates nothing; the row stays for the record.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_sha256 = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class NotificationPreference(models.Model):
    """A user's choice of e-mails (web/notifications/): absent means the defaults (e-mail on)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    email_case_done = models.BooleanField(default=True)  # a case I uploaded is ready or failed

    def __str__(self) -> str:
        return f"Notifications of user {self.user_id}"


class Webhook(models.Model):
    """An outgoing webhook of a team (web/notifications/webhooks.py): a JSON POST to ``url``, signed
    with HMAC-SHA256 under ``secret``, when a case of the team is ready and/or failed. The secret is
    kept as is (it signs every delivery) but shown only once, when the webhook is made."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="webhooks")
    name = models.CharField(max_length=100)
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=128)
    on_ready = models.BooleanField(default=True)
    on_failed = models.BooleanField(default=True)
    send_hosts = models.BooleanField(default=True)  # off: the payload names no host
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name", "id")

    def __str__(self) -> str:
        return f"Webhook {self.pk} {self.name}"


class WebhookDelivery(models.Model):
    """One attempt to deliver one event to a webhook: the delivery log of the team page.
    ``delivery``: the id of the event's delivery (the same on each retry, header
    ``X-Casebook-Delivery``); ``status_code``: the receiver's answer (None: no answer, ``error``
    says why); ``duration_ms``: from connecting to the end of the answer."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    delivery = models.CharField(max_length=40, db_index=True)
    event = models.CharField(max_length=20)  # case.ready, case.failed, test
    case_id = models.BigIntegerField(null=True, blank=True)
    attempt = models.PositiveSmallIntegerField()
    at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.webhook_id}, attempt {self.attempt}: {self.status_code}"
