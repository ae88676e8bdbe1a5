from django.contrib import admin

from simulator.models import CalibrationFit, MeasuredRun, SimulationRun, UserCalibration


@admin.register(SimulationRun)
class SimulationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "kind", "status", "progress_pct", "created_at"]
    list_filter = ["kind", "status"]


@admin.register(MeasuredRun)
class MeasuredRunAdmin(admin.ModelAdmin):
    list_display = ["run_id", "owner", "created_at"]


@admin.register(UserCalibration)
class UserCalibrationAdmin(admin.ModelAdmin):
    list_display = ["owner", "n_runs", "is_active", "fitted_at"]


@admin.register(CalibrationFit)
class CalibrationFitAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "status", "progress_pct", "created_at"]
    list_filter = ["status"]
