from django.contrib import admin

from .models import (
    Annotation,
    Document,
    ExtractionItem,
    ExtractionRun,
    Prediction,
    PredictionScore,
    Project,
    ScorerModel,
    TrainingRun,
)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "llm_base_url",
        "align_threshold",
        "nli_threshold",
        "created_at",
    ]
    search_fields = ["name", "description"]
    filter_horizontal = ["members"]
    list_filter = ["created_at"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "created_at", "updated_at"]
    list_filter = ["project"]
    search_fields = ["external_id", "text"]
    list_select_related = ["project"]


class ExtractionItemInline(admin.TabularInline):
    model = ExtractionItem
    fields = ["document", "status", "prediction_count", "error"]
    readonly_fields = fields
    raw_id_fields = ["document"]
    extra = 0
    can_delete = False


@admin.register(ExtractionRun)
class ExtractionRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "project",
        "model",
        "status",
        "progress_done",
        "progress_total",
        "cost_estimate",
        "created_at",
    ]
    list_filter = ["status", "project", "model"]
    search_fields = ["model", "error"]
    readonly_fields = ["created_at", "started_at", "finished_at"]
    inlines = [ExtractionItemInline]


@admin.register(ExtractionItem)
class ExtractionItemAdmin(admin.ModelAdmin):
    list_display = ["run", "document", "status", "prediction_count", "updated_at"]
    list_filter = ["status", "run__project"]
    search_fields = ["document__external_id", "error"]
    raw_id_fields = ["run", "document"]


class PredictionScoreInline(admin.TabularInline):
    model = PredictionScore
    fields = ["scorer", "scorer_version", "score", "updated_at"]
    readonly_fields = fields
    extra = 0


class AnnotationInline(admin.TabularInline):
    model = Annotation
    fields = ["annotator", "source", "label", "note", "seconds_spent"]
    raw_id_fields = ["annotator"]
    extra = 0


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "project",
        "type",
        "model",
        "verdict",
        "reason",
        "align_score",
        "score",
    ]
    list_filter = ["project", "verdict", "reason", "kind", "model", "type"]
    search_fields = ["external_id", "document__external_id", "context", "hypothesis"]
    raw_id_fields = ["document", "source_run"]
    list_select_related = ["project"]
    inlines = [PredictionScoreInline, AnnotationInline]


@admin.register(PredictionScore)
class PredictionScoreAdmin(admin.ModelAdmin):
    list_display = ["prediction", "scorer", "scorer_version", "score", "updated_at"]
    list_filter = ["scorer", "scorer_version"]
    search_fields = ["prediction__external_id", "scorer"]
    raw_id_fields = ["prediction"]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = [
        "prediction",
        "annotator",
        "label",
        "source",
        "seconds_spent",
        "created_at",
    ]
    list_filter = ["label", "source", "annotator", "prediction__project"]
    search_fields = ["prediction__external_id", "note", "annotator__username"]
    raw_id_fields = ["prediction", "annotator"]


@admin.register(ScorerModel)
class ScorerModelAdmin(admin.ModelAdmin):
    list_display = [
        "version",
        "project",
        "base_model",
        "threshold",
        "is_active",
        "created_at",
    ]
    list_filter = ["project", "is_active", "base_model"]
    search_fields = ["version", "base_model", "path"]
    raw_id_fields = ["training_run"]


@admin.register(TrainingRun)
class TrainingRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "status", "base_model", "progress", "created_at"]
    list_filter = ["status", "project"]
    search_fields = ["base_model", "log", "error"]
    readonly_fields = ["created_at", "started_at", "finished_at"]
