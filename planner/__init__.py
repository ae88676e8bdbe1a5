"""GPU Planner: the Django project package and the planning app."""

from planner.celery import app as celery_app

__all__ = ["celery_app"]
