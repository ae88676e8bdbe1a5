from typing import Any

from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from planner.models import (
    AnalysisRun,
    ApiToken,
    CapacityPart,
    CapacityRun,
    History,
    OutboxEntry,
    PlanScenario,
    PlanSweepChunk,
    Report,
    ServingPlan,
    ThrottleCounter,
)
from planner.security import login_lock_message


class ThrottledAdminAuthenticationForm(AdminAuthenticationForm):
    """The admin sign-in, refusing a locked account like the site's form does."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        locked = login_lock_message(username, self.request) if username else ""
        if locked:
            raise ValidationError(locked, code="locked")
        return super().clean()


admin.site.login_form = ThrottledAdminAuthenticationForm


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


@admin.register(ServingPlan)
class ServingPlanAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "created_at"]
    search_fields = ["name", "owner__username"]
    list_select_related = ["owner"]
    exclude = ["result"]


@admin.register(PlanScenario)
class PlanScenarioAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "status", "is_saved", "created_at"]
    list_filter = ["status", "is_saved"]
    search_fields = ["name", "owner__username"]
    list_select_related = ["owner"]
    exclude = ["result"]


@admin.register(PlanSweepChunk)
class PlanSweepChunkAdmin(admin.ModelAdmin):
    list_display = ["id", "scenario", "index", "n_chunks", "status", "attempts", "created_at"]
    list_filter = ["status"]
    list_select_related = ["scenario"]
    exclude = ["result"]


@admin.register(CapacityRun)
class CapacityRunAdmin(admin.ModelAdmin):
    list_display = ["id", "history", "status", "attempts", "created_at", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["history"]
    exclude = ["result"]


@admin.register(CapacityPart)
class CapacityPartAdmin(admin.ModelAdmin):
    list_display = ["id", "capacity_run", "index", "n_parts", "status", "attempts", "created_at"]
    list_filter = ["status"]
    exclude = ["result"]


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "owner", "kind", "subject_id", "fmt", "status", "size_bytes",
                    "created_at"]
    list_filter = ["status", "kind", "fmt"]
    search_fields = ["title", "owner__username"]
    list_select_related = ["owner"]
    exclude = ["document", "result"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Staff can see and revoke (set revoked_at) tokens; the token itself is never stored."""

    list_display = ["id", "name", "owner", "prefix", "created_at", "last_used_at", "revoked_at"]
    search_fields = ["name", "owner__username"]
    list_select_related = ["owner"]
    readonly_fields = ["owner", "digest", "prefix", "created_at", "last_used_at"]


@admin.register(OutboxEntry)
class OutboxEntryAdmin(admin.ModelAdmin):
    """Tasks not yet taken by the broker (sent by the run sweep once it is back)."""

    list_display = ["id", "task_name", "run_label", "run_id", "created_at", "tries", "last_error"]
    readonly_fields = ["task_name", "run_label", "run_id", "created_at", "tries", "last_error"]


@admin.register(ThrottleCounter)
class ThrottleCounterAdmin(admin.ModelAdmin):
    """Sign-in failure counters (keys are digests); delete one to lift a lock early."""

    list_display = ["key", "count", "window_ends"]
    readonly_fields = ["key", "count", "window_ends"]
