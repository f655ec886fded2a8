"""An invitation by e-mail is kept by its address (``TeamInvitation.address``), its ``user`` empty until an
account holding that address answers: the team admin who typed the address never learns whether an account
holds it, nor its user name."""

import django.db.models.deletion
import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0103_trends_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="teaminvitation",
            name="address",
            field=models.EmailField(blank=True, default="", max_length=254),
        ),
        migrations.AlterField(
            model_name="teaminvitation",
            name="user",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="team_invitations",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="teaminvitation",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("address"),
                models.F("team"),
                condition=models.Q(("state", "pending"), models.Q(("address", ""), _negated=True)),
                name="one_pending_invitation_per_team_and_address",
            ),
        ),
        migrations.AddConstraint(
            model_name="teaminvitation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("user__isnull", False), models.Q(("address", ""), _negated=True), _connector="OR"
                ),
                name="invitation_names_a_user_or_an_address",
            ),
        ),
    ]
