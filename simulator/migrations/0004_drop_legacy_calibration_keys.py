"""Stored user calibrations lose the keys of knobs that were dropped or renamed (the time
model's per-workload efficiencies, simt_factor and the old residual bands), so loading a
calibration needs no list of legacy keys."""

from django.db import migrations

LEGACY_KEYS = ("efficiency_llm", "efficiency_bert", "efficiency_resnet", "simt_factor",
               "log_residual_p10", "log_residual_p90")


def drop_legacy_keys(apps, schema_editor):
    UserCalibration = apps.get_model("simulator", "UserCalibration")
    for calibration in UserCalibration.objects.all():
        params = {k: v for k, v in calibration.params.items() if k not in LEGACY_KEYS}
        if params != calibration.params:
            calibration.params = params
            calibration.save(update_fields=["params"])


class Migration(migrations.Migration):
    dependencies = [("simulator", "0003_run_lease")]
    operations = [migrations.RunPython(drop_legacy_keys, migrations.RunPython.noop)]
