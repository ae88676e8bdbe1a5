from django.contrib import admin

from planner.models import AnalysisRun, History, PlanScenario, Report


@admin.register(History)
class HistoryAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "fmt", "records", "size_bytes", "created_at"]
    list_filter = ["fmt", "is_usage"]
    search_fields = ["name", "owner__username"]
    list_select_related = ["owner"]


@admin.register(AnalysisRun)
class AnalysisRunAdmin(admin.ModelAdmin):
    list_display = ["id", "history", "status", "progress_pct", "provider", "region", "created_at"]
    list_filter = ["status"]
    list_select_related = ["history"]
    exclude = ["result"]


@admin.register(PlanScenario)
class PlanScenarioAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "status", "is_saved", "created_at"]
    list_filter = ["status", "is_saved"]
    search_fields = ["name", "owner__username"]
    list_select_related = ["owner"]
    exclude = ["result"]


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "owner", "kind", "subject_id", "fmt", "status", "size_bytes",
                    "created_at"]
    list_filter = ["status", "kind", "fmt"]
    search_fields = ["title", "owner__username"]
    list_select_related = ["owner"]
    exclude = ["document", "result"]
