"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")
application = get_wsgi_application()

from planner.startup import settle_after_startup  # noqa: E402  (needs the settings above)

settle_after_startup()
