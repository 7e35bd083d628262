from django.contrib import admin

from annotator.admin import LLMRunAdmin, WrittenByServices
from annotator.kinds.extraction.models import ExtractionItem, ExtractionRun


class ExtractionItemInline(admin.TabularInline):
    model = ExtractionItem
    fields = ["document", "status", "claim_count", "error"]
    readonly_fields = fields
    raw_id_fields = ["document"]
    extra = 0
    can_delete = False


@admin.register(ExtractionRun)
class ExtractionRunAdmin(LLMRunAdmin):
    inlines = [ExtractionItemInline]


@admin.register(ExtractionItem)
class ExtractionItemAdmin(WrittenByServices, admin.ModelAdmin):
    list_display = ["run", "document", "status", "claim_count", "updated_at"]
    list_filter = ["status", "run__project"]
    search_fields = ["document__external_id", "error"]
    raw_id_fields = ["run", "document"]
