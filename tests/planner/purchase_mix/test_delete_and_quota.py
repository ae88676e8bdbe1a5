"""Deleting a job history (page and API) takes its files and analyses with it; the storage
quota refuses an upload that would go over it, naming the sizes, and stores nothing."""

from django.core.files.storage import default_storage

from planner.models import AnalysisRun, History
from planner.purchase_mix.services import storage_used
from tests.planner.conftest import GENERIC_CSV, csv_upload

UPLOAD = "/history/upload"


def _upload(client, captured, name="jobs.csv"):
    with captured():
        response = client.post(UPLOAD, {"file": csv_upload(GENERIC_CSV, name), "fmt": "generic",
                                        "duplicate_ids": "refuse"})
    assert response.status_code == 302, response.content.decode()[:500]
    return History.objects.get(name=name)


def test_deleting_a_history_asks_first_then_removes_it_its_runs_and_files(
        user_client, other_client, django_capture_on_commit_callbacks):
    history = _upload(user_client, django_capture_on_commit_callbacks)
    files = [history.upload.name, history.parsed.name, history.demand.name]
    assert all(default_storage.exists(name) for name in files)
    page = user_client.get(f"/history/{history.pk}")
    assert f'href="/history/{history.pk}/delete"' in page.content.decode()

    confirm = user_client.get(f"/history/{history.pk}/delete")
    body = confirm.content.decode()
    assert confirm.status_code == 200 and "jobs.csv" in body and "cannot be undone" in body
    assert History.objects.filter(pk=history.pk).exists()  # a GET deletes nothing
    # Someone else can neither see what it holds nor delete it.
    assert other_client.get(f"/history/{history.pk}/delete").status_code == 404
    assert other_client.post(f"/history/{history.pk}/delete").status_code == 404
    assert History.objects.filter(pk=history.pk).exists()

    with django_capture_on_commit_callbacks(execute=True):
        done = user_client.post(f"/history/{history.pk}/delete", follow=True)
    assert done.redirect_chain[-1][0] == "/history/"
    assert "Deleted “jobs.csv”" in done.content.decode()
    assert not History.objects.filter(pk=history.pk).exists()
    assert not AnalysisRun.objects.filter(history_id=history.pk).exists()
    assert not any(default_storage.exists(name) for name in files)
    assert user_client.get(f"/history/{history.pk}").status_code == 404


def test_the_api_deletes_a_history_with_204_and_404s_for_others(
        user_client, other_client, django_capture_on_commit_callbacks):
    history = _upload(user_client, django_capture_on_commit_callbacks)
    assert other_client.delete(f"/api/histories/{history.pk}").status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.delete(f"/api/histories/{history.pk}")
    assert response.status_code == 204
    assert not History.objects.exists()
    assert not default_storage.exists(history.upload.name)
    assert user_client.delete(f"/api/histories/{history.pk}").status_code == 404


def test_an_upload_over_the_storage_quota_is_413_naming_the_sizes_and_stores_nothing(
        user_client, settings, django_capture_on_commit_callbacks):
    first = _upload(user_client, django_capture_on_commit_callbacks, "first.csv")
    # The quota counts the upload and the tables derived from it.
    settings.USER_STORAGE_QUOTA_BYTES = int(storage_used(first.owner_id) * 1.5)
    listing = user_client.get("/history/").content.decode()
    assert "Your files (job histories, the tables derived from them, and reports) use" in listing
    assert "KB" in listing  # the parquet tables: a few KB beside the 300-byte upload

    refused = user_client.post(UPLOAD, {"file": csv_upload(GENERIC_CSV, "second.csv"),
                                        "fmt": "generic", "duplicate_ids": "refuse"})
    assert refused.status_code == 413
    body = refused.content.decode()
    assert "over your" in body and "of storage" in body and "Delete a history" in body
    api = user_client.post("/api/histories", {"file": csv_upload(GENERIC_CSV, "third.csv"),
                                              "format": "generic"})
    assert api.status_code == 413 and "Delete a history" in api.json()["detail"]
    assert list(History.objects.values_list("name", flat=True)) == ["first.csv"]

    # Deleting the first makes room again.
    with django_capture_on_commit_callbacks(execute=True):
        user_client.post(f"/history/{first.pk}/delete")
    _upload(user_client, django_capture_on_commit_callbacks, "second.csv")


def test_the_quota_counts_each_user_alone(user_client, other_client, settings,
                                          django_capture_on_commit_callbacks):
    first = _upload(user_client, django_capture_on_commit_callbacks, "ada.csv")
    # The quota counts the upload and the tables derived from it.
    settings.USER_STORAGE_QUOTA_BYTES = int(storage_used(first.owner_id) * 1.5)
    _upload(other_client, django_capture_on_commit_callbacks, "bob.csv")
