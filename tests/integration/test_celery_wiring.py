import pytest

from planner.tasks import ping_task

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_task_runs_on_a_real_worker_over_redis(celery_worker_process: object) -> None:
    result = ping_task.apply_async(args=[41], ignore_result=False)
    assert result.get(timeout=30) == 41
