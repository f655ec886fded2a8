"""Teams (a case belongs to one; engineers see their teams' cases), the engineers' metadata of a case
(customer, ticket, tags, notes), what a case is searched and compared by (finding keys, top
fingerprints and wait channels, a full-text search vector) and their indexes (GIN, pg_trgm).

Existing cases and engineers join the default team, so a running deployment keeps seeing its cases;
existing cases get their finding keys and search vector now (fingerprints and wait channels on their
next Re-analyze).
"""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.operations
import django.contrib.postgres.search
import django.db.models.deletion
import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models

import web.models


def _existing_into_default_team(apps, schema_editor) -> None:
    Team = apps.get_model("web", "Team")
    Case = apps.get_model("web", "Case")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    team, _ = Team.objects.get_or_create(name="Default")
    Case.objects.filter(team__isnull=True).update(team=team)
    team.members.add(*User.objects.all())


#: Finding keys of the existing cases, then their search vector (as web/search.py builds it).
BACKFILL_SQL = """
UPDATE web_case c SET finding_keys = k.keys
  FROM (SELECT case_id, array_agg(DISTINCT key ORDER BY key) AS keys FROM web_finding GROUP BY case_id) k
 WHERE k.case_id = c.id;
UPDATE web_case SET search_vector =
    setweight(to_tsvector('simple', coalesce(title, '') || ' ' || coalesce(customer, '') || ' '
                          || coalesce(ticket, '')), 'A')
 || setweight(to_tsvector('simple', coalesce(host, '')), 'B')
 || setweight(to_tsvector('simple', array_to_string(finding_keys, ' ') || ' '
                          || coalesce(search_terms, '')), 'C');
"""


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0040_case_fault_handling"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        django.contrib.postgres.operations.TrigramExtension(),
        migrations.AddField(
            model_name="case",
            name="customer",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="case",
            name="finding_keys",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=80), blank=True, default=list, size=None
            ),
        ),
        migrations.AddField(
            model_name="case",
            name="fingerprints",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.TextField(), blank=True, default=list, size=None
            ),
        ),
        migrations.AddField(
            model_name="case",
            name="notes",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="case",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="case",
            name="tags",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=50), blank=True, default=list, size=None
            ),
        ),
        migrations.AddField(
            model_name="case",
            name="ticket",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name="case",
            name="wait_channels",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=100), blank=True, default=list, size=None
            ),
        ),
        migrations.CreateModel(
            name="Team",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "members",
                    models.ManyToManyField(blank=True, related_name="teams", to=settings.AUTH_USER_MODEL),
                ),
            ],
            options={
                "ordering": ("name",),
            },
        ),
        migrations.AddField(
            model_name="case",
            name="team",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="cases", to="web.team"
            ),
        ),
        migrations.RunPython(_existing_into_default_team, migrations.RunPython.noop),
        migrations.RunSQL(BACKFILL_SQL, migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="case",
            name="team",
            field=models.ForeignKey(
                default=web.models.default_team_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="cases",
                to="web.team",
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=models.Index(fields=["team", "-created_at"], name="case_team_created_idx"),
        ),
        migrations.AddIndex(
            model_name="case",
            index=models.Index(
                django.db.models.functions.text.Upper("customer"), name="case_customer_upper_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="case_search_vector_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["host"], name="case_host_trgm_idx", opclasses=["gin_trgm_ops"]
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["ticket"], name="case_ticket_trgm_idx", opclasses=["gin_trgm_ops"]
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["finding_keys"], name="case_finding_keys_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["fingerprints"], name="case_fingerprints_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="case",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["wait_channels"], name="case_wait_channels_idx"
            ),
        ),
    ]
