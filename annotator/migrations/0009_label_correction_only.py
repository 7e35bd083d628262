"""A label's ``corrected_type`` and ``corrected_value`` columns go, now that
``correction`` holds them (0008)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotator", "0008_label_correction")]

    operations = [
        migrations.RemoveField(model_name="annotation", name="corrected_type"),
        migrations.RemoveField(model_name="annotation", name="corrected_value"),
        migrations.AlterField(
            model_name="annotation",
            name="suggestion",
            field=models.CharField(
                blank=True,
                choices=[("accepted", "Accepted"), ("rejected", "Rejected")],
                help_text="The expert's decision on the correction the app suggested "
                "(a consistency run's improver): accepted, when the correction "
                "holds it, or rejected; empty when there was none or no decision.",
                max_length=8,
            ),
        ),
    ]
