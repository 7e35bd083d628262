"""The project's ``entity_schema``, ``extraction_prompt`` and
``align_threshold`` columns go, now that its kind's options hold them (0005);
the kind of a project made without one is the one its kind app says is the
default (a Python default: the database changes nothing)."""

from django.db import migrations, models

import annotator.kinds
import annotator.models


class Migration(migrations.Migration):
    dependencies = [("annotator", "0005_project_options")]

    operations = [
        migrations.RemoveField(model_name="project", name="entity_schema"),
        migrations.RemoveField(model_name="project", name="extraction_prompt"),
        migrations.RemoveField(model_name="project", name="align_threshold"),
        migrations.AlterField(
            model_name="project",
            name="kind",
            field=models.CharField(
                choices=annotator.models.checker_kinds,
                default=annotator.kinds.default_kind,
                help_text="What the project checks (a checker of pipeline.checkers, "
                "and the claim partial of the labeling page); chosen when it is "
                "created.",
                max_length=32,
            ),
        ),
    ]
