"""API authentication: a browser session, or HTTP basic auth so that curl and scripts work."""

from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.http import HttpRequest
from ninja.security import HttpBasicAuth, django_auth


class BasicAuth(HttpBasicAuth):
    """HTTP basic auth, only over HTTPS (unless API_BASIC_AUTH_HTTPS_ONLY is off for local
    development): a password sent in clear text is refused even when right."""

    def authenticate(self, request: HttpRequest, username: str, password: str) -> Any:
        if settings.API_BASIC_AUTH_HTTPS_ONLY and not request.is_secure():
            return None
        user = authenticate(request, username=username, password=password)
        if user is not None and user.is_active:
            request.user = user
            return user
        return None


API_AUTH = [BasicAuth(), django_auth]
