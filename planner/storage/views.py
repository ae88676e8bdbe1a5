"""The storage what-if page: GET with the form's fields (a shareable link), no state kept."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from planner.storage import services
from planner.storage.core.inputs import FIELD_REPORT_EXAMPLE
from planner.storage.forms import StorageWhatIfForm


def storage_whatif(request: HttpRequest) -> HttpResponse:
    data = request.GET if request.GET else {**FIELD_REPORT_EXAMPLE}
    form = StorageWhatIfForm(data)
    result = None
    if form.is_valid():
        raw = {k: v for k, v in form.cleaned_data.items() if v not in (None, "", [])}
        try:
            result = services.storage_whatif(raw=raw)
        except ValueError as exc:
            name, _, message = str(exc).partition(": ")
            form.add_error(name if name in form.fields else None, message or str(exc))
    return render(request, "planner/storage/whatif.html",
                  {"form": form, "result": result, "is_example": not request.GET})


