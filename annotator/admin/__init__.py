from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from annotator.claims.checking import CHECK_FIELDS, scorer_activate
from annotator.core import accounts
from annotator.core.errors import ApplicationError
from annotator.models import (
    Adjudication,
    ApiToken,
    Claim,
    ClaimScore,
    Document,
    GradingRun,
    Guideline,
    Label,
    Membership,
    Project,
    ScorerModel,
    TrainingRun,
    Webhook,
    WebhookDelivery,
)
from annotator.projects import services
from annotator.training.runs import training_run_cancel


class ThrottledAdminLoginForm(AdminAuthenticationForm):
    """The admin's login says why past the failed-login limit; the
    authentication backend refuses the password either way."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if accounts.login_blocked(request=self.request, username=username):
            raise ValidationError(
                "Too many failed logins; try again later.", code="throttled"
            )
        return super().clean()


admin.site.login_form = ThrottledAdminLoginForm


class WrittenByServices:
    """Rows the services alone write (runs and their state, scorer
    versions): shown whole and read-only, changed only through the actions,
    which go through the services; never added here."""

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    fields = ["user", "role"]
    raw_id_fields = ["user"]
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "kind",
        "llm_base_url",
        "nli_threshold",
        "created_at",
    ]
    search_fields = ["name", "description"]
    inlines = [MembershipInline]
    list_filter = ["kind", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        # Its claims were made for one checker.
        return ["kind"] if obj else []

    def save_model(self, request, obj, form, change):
        """A change goes through the service, so that a threshold or schema
        changed here has the claims checked again, as through the API."""
        if not change:
            return super().save_model(request, obj, form, change)
        fields = {name: form.cleaned_data[name] for name in form.changed_data}
        services.project_update(Project.objects.get(pk=obj.pk), **fields)


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "created_at", "updated_at"]
    list_filter = ["project"]
    search_fields = ["external_id", "text"]
    list_select_related = ["project"]


class ClaimScoreInline(admin.TabularInline):
    model = ClaimScore
    fields = ["scorer", "scorer_version", "score", "updated_at"]
    readonly_fields = fields
    extra = 0


class LabelInline(admin.TabularInline):
    model = Label
    fields = ["annotator", "source", "label", "note", "seconds_spent"]
    raw_id_fields = ["annotator"]
    extra = 0


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "project",
        "model",
        "verdict",
        "reason",
        "evidence_score",
        "score",
        "decisive_labels",
    ]
    list_filter = [
        "project",
        "verdict",
        "reason",
        "queue_open",
        "model",
    ]
    search_fields = ["external_id", "document__external_id", "hypothesis"]
    raw_id_fields = ["document"]
    # What the check writes: changed by checking again, never by hand; and
    # the run that made the claim.
    readonly_fields = [*CHECK_FIELDS, "source_run_type", "source_run_id"]
    list_select_related = ["project"]
    inlines = [ClaimScoreInline, LabelInline]


@admin.register(ClaimScore)
class ClaimScoreAdmin(admin.ModelAdmin):
    list_display = ["claim", "scorer", "scorer_version", "score", "updated_at"]
    list_filter = ["scorer", "scorer_version"]
    search_fields = ["claim__external_id", "scorer"]
    raw_id_fields = ["claim"]


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = [
        "claim",
        "annotator",
        "label",
        "source",
        "seconds_spent",
        "created_at",
    ]
    list_filter = ["label", "source", "annotator", "claim__project"]
    search_fields = ["claim__external_id", "note", "annotator__username"]
    raw_id_fields = ["claim", "annotator"]


@admin.register(ScorerModel)
class ScorerModelAdmin(WrittenByServices, admin.ModelAdmin):
    list_display = [
        "version",
        "project",
        "base_model",
        "expert_labels",
        "gold_f1",
        "threshold",
        "is_active",
        "created_at",
    ]
    list_filter = ["project", "is_active", "base_model"]
    search_fields = ["version", "base_model", "path"]
    actions = ["activate"]

    @admin.action(description="Make active (promote or roll back; rescores)")
    def activate(self, request, queryset):
        scorers = list(queryset)
        if len({s.project_id for s in scorers}) != len(scorers):
            self.message_user(
                request,
                "Pick one version per project: a project has one active scorer.",
                messages.ERROR,
            )
            return
        for scorer in scorers:
            scorer_activate(scorer=scorer)
            self.message_user(
                request,
                f"{scorer.project}: {scorer.version} is active; its claims "
                "are being rescored.",
            )


@admin.register(TrainingRun)
class TrainingRunAdmin(WrittenByServices, admin.ModelAdmin):
    list_display = [
        "id",
        "project",
        "status",
        "trigger",
        "stage",
        "progress",
        "val_f1",
        "expert_labels",
        "created_at",
    ]
    list_filter = ["status", "trigger", "project"]
    search_fields = ["base_model", "log", "error"]
    actions = ["cancel"]

    @admin.action(description="Cancel the selected runs")
    def cancel(self, request, queryset):
        for run in queryset:
            try:
                training_run_cancel(run=run)
            except ApplicationError as e:
                self.message_user(request, str(e), messages.WARNING)
            else:
                self.message_user(request, f"training run {run.pk}: cancelling")


class LLMRunAdmin(WrittenByServices, admin.ModelAdmin):
    """An LLM run of any kind, as its services wrote it."""

    list_display = [
        "id",
        "project",
        "model",
        "status",
        "progress_done",
        "progress_total",
        "cost",
        "budget",
        "created_at",
    ]
    list_filter = ["status", "project", "model"]
    search_fields = ["model", "error"]


admin.site.register(GradingRun, LLMRunAdmin)


@admin.register(Guideline)
class GuidelineAdmin(admin.ModelAdmin):
    """Guidelines are written on the project's guideline page (or POSTed to
    the API), each save a new version; here their history is read. Versions
    are never changed or deleted: labels record the one they were made under."""

    list_display = ["project", "version", "created_by", "created_at"]
    list_filter = ["project"]
    search_fields = ["project__name", "text"]
    fields = ["project", "version", "text", "created_by", "created_at"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are issued through the API (the key is shown once); here they
    are listed and revoked (deleted). The digest is never shown."""

    list_display = ["prefix", "user", "created_at", "expires_at", "last_used_at"]
    list_filter = ["expires_at"]
    search_fields = ["prefix", "user__username"]
    fields = ["prefix", "user", "created_at", "expires_at", "last_used_at"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """Webhooks are registered through the API, which checks the URL against
    WEBHOOK_ALLOWED_HOSTS and the events and shows the secret once; here
    they are paused or deleted. The secret is never shown."""

    list_display = ["id", "project", "url", "events", "is_active", "created_at"]
    list_filter = ["is_active", "project"]
    search_fields = ["url", "project__name"]
    fields = ["project", "url", "events", "is_active", "created_by", "created_at"]
    readonly_fields = ["project", "url", "events", "created_by", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "webhook",
        "event",
        "status",
        "attempts",
        "response_status",
        "created_at",
        "last_attempt_at",
    ]
    list_filter = ["status", "event"]
    search_fields = ["event", "error", "webhook__url"]
    list_select_related = ["webhook__project"]
    readonly_fields = [
        "webhook",
        "event",
        "payload",
        "status",
        "attempts",
        "response_status",
        "error",
        "created_at",
        "last_attempt_at",
        "delivered_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    """Reviewers decide on the adjudication page, which checks that the
    experts disagree; here the decisions are read (and can be deleted, which
    puts the item back in the queue)."""

    list_display = ["claim", "label", "reviewer", "updated_at"]
    list_filter = ["label", "claim__project"]
    search_fields = ["claim__external_id", "note", "reviewer__username"]
    readonly_fields = ["claim", "reviewer", "label", "note", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False
