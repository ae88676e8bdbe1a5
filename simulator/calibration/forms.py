"""Upload form for a CSV of measured runs (reference-runs schema)."""

from django import forms
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat

from simulator.calibration.services import measured_runs_max_bytes


class MeasuredRunsUploadForm(forms.Form):
    file = forms.FileField(label="Measured runs (CSV, reference-runs columns)")

    def clean_file(self) -> UploadedFile:
        upload: UploadedFile = self.cleaned_data["file"]
        limit_bytes = measured_runs_max_bytes()
        if upload.size is not None and upload.size > limit_bytes:
            raise forms.ValidationError(
                f"The file is {filesizeformat(upload.size)}; measured-runs CSVs are limited to "
                f"{filesizeformat(limit_bytes)}."
            )
        return upload
