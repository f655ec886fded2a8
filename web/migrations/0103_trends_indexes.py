"""The team's trends read a range of a team's uploads: one index on (team, created_at) holding the columns
they count (status, closed_at, ingested_at, root_cause_key, customer), for index-only scans."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0102_team_invitations"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="case",
            index=models.Index(
                fields=["team", "created_at"],
                include=("id", "status", "closed_at", "ingested_at", "root_cause_key", "customer"),
                name="case_trends_idx",
            ),
        ),
    ]
