"""The claim's ``type``, ``value`` and ``context`` columns go, now that
``data`` holds them (0003), and with them the index on ``(project, type)``."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotator", "0003_claim_data")]

    operations = [
        migrations.RemoveIndex(
            model_name="claim", name="annotator_p_project_593c7c_idx"
        ),
        migrations.RemoveField(model_name="claim", name="context"),
        migrations.RemoveField(model_name="claim", name="type"),
        migrations.RemoveField(model_name="claim", name="value"),
        migrations.AlterField(
            model_name="claim",
            name="extra",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Other fields of the imported record.",
            ),
        ),
    ]
