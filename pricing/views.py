from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from pricing.models import Accelerator


def catalog(request: HttpRequest) -> HttpResponse:
    return render(request, "pricing/catalog.html", {"accelerators": Accelerator.objects.all()})
