"""Hardening (issue 10): project roles, label receipts, hashed API tokens and
LLM-run heartbeats.

- ``Project.members`` keeps its table and rows; the table gains a ``role``
  column (every existing member an expert) and becomes the ``Membership``
  model. Staff users, who could act on every project before roles, become
  project admins of every existing project, so an upgrade takes no access
  away; a superuser can narrow it per project afterwards.
- Every stored ``Annotation.client_id`` gets a receipt.
- DRF's plain-text tokens are replaced by their SHA-256 digests, valid for
  30 days from the upgrade, and the plain-text table is dropped.
"""

import hashlib
from datetime import timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

UPGRADED_TOKEN_DAYS = 30


def staff_become_project_admins(apps, schema_editor):
    Membership = apps.get_model("annotator", "Membership")
    Project = apps.get_model("annotator", "Project")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    staff = list(
        User.objects.filter(is_staff=True, is_superuser=False).values_list(
            "pk", flat=True
        )
    )
    for project_id in Project.objects.values_list("pk", flat=True):
        for user_id in staff:
            Membership.objects.update_or_create(
                project_id=project_id, user_id=user_id, defaults={"role": "admin"}
            )


def receipts_from_annotations(apps, schema_editor):
    Annotation = apps.get_model("annotator", "Annotation")
    LabelReceipt = apps.get_model("annotator", "LabelReceipt")
    rows = Annotation.objects.filter(
        client_id__isnull=False, annotator__isnull=False
    ).values_list("client_id", "annotator_id", "prediction_id")
    LabelReceipt.objects.bulk_create(
        (
            LabelReceipt(client_id=c, annotator_id=a, prediction_id=p)
            for c, a, p in rows.iterator()
        ),
        batch_size=1000,
    )


def tokens_hashed(apps, schema_editor):
    from django.utils import timezone

    connection = schema_editor.connection
    if "authtoken_token" not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("annotator", "ApiToken")
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, user_id FROM authtoken_token")
        rows = cursor.fetchall()
    expires = timezone.now() + timedelta(days=UPGRADED_TOKEN_DAYS)
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            digest=hashlib.sha256(key.encode()).hexdigest(),
            prefix=key[:8],
            expires_at=expires,
        )
        for key, user_id in rows
    )
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE authtoken_token")


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0007_llm_run_shared_fields"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE annotator_project_members "
                    "ADD COLUMN role varchar(8) NOT NULL DEFAULT 'expert'",
                    "ALTER TABLE annotator_project_members DROP COLUMN role",
                )
            ],
            state_operations=[
                migrations.CreateModel(
                    name="Membership",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "role",
                            models.CharField(
                                choices=[
                                    ("admin", "Project admin"),
                                    ("expert", "Expert"),
                                    ("viewer", "Viewer"),
                                ],
                                default="expert",
                                max_length=8,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="memberships",
                                to="annotator.project",
                            ),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="memberships",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotator_project_members",
                        "unique_together": {("project", "user")},
                    },
                ),
                migrations.AlterField(
                    model_name="project",
                    name="members",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="projects",
                        through="annotator.Membership",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.RunPython(staff_become_project_admins, migrations.RunPython.noop),
        migrations.CreateModel(
            name="LabelReceipt",
            fields=[
                ("client_id", models.UUIDField(primary_key=True, serialize=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "annotator",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "prediction",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotator.prediction",
                    ),
                ),
            ],
        ),
        migrations.RunPython(receipts_from_annotations, migrations.RunPython.noop),
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                ("digest", models.CharField(max_length=64, unique=True)),
                (
                    "prefix",
                    models.CharField(
                        help_text="First characters of the key, to tell tokens "
                        "apart.",
                        max_length=8,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["user", "expires_at"],
                        name="api_token_user_expiry",
                    )
                ],
            },
        ),
        migrations.RunPython(tokens_hashed, migrations.RunPython.noop),
        migrations.AddField(
            model_name="extractionrun",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Last progress of a worker; a running run silent for "
                "LLM_RUN_STALE_SECONDS is handed to another worker by the sweep.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="gradingrun",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Last progress of a worker; a running run silent for "
                "LLM_RUN_STALE_SECONDS is handed to another worker by the sweep.",
                null=True,
            ),
        ),
    ]
