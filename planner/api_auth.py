"""API authentication: a browser session, or HTTP basic auth so that curl and scripts work."""

from typing import Any

from django.contrib.auth import authenticate
from django.http import HttpRequest
from ninja.security import HttpBasicAuth, django_auth


class BasicAuth(HttpBasicAuth):
    def authenticate(self, request: HttpRequest, username: str, password: str) -> Any:
        user = authenticate(request, username=username, password=password)
        if user is not None and user.is_active:
            request.user = user
            return user
        return None


API_AUTH = [BasicAuth(), django_auth]
