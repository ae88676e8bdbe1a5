"""GPU Planner: the Django project package, the run protocol and the planning features.

The Celery app (planner.celery) is loaded by PlannerConfig.ready(), not here, so that the
Django-free cores under planner/ import without Celery.
"""
