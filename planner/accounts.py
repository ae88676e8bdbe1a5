"""Accounts: sign-up (log-in and log-out are Django's own views under /accounts/)."""

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


def signup(request: HttpRequest) -> HttpResponse:
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="planner.security.ThrottledModelBackend")
        return redirect("planner:history_list")
    return render(request, "registration/signup.html", {"form": form})
