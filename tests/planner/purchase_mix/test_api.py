import base64

import pytest

from planner.models import History
from tests.planner.conftest import (
    BAD_CSV,
    GENERIC_CSV,
    HELIOS,
    PHILLY,
    PHILLY_MAP,
    csv_upload,
    file_upload,
)

URL = "/api/histories"


def _basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    # basic auth is accepted over HTTPS only
    return {"HTTP_AUTHORIZATION": f"Basic {token}", "wsgi.url_scheme": "https"}


def test_anonymous_is_401(client, db):
    assert client.post(URL, {"file": csv_upload(GENERIC_CSV)}).status_code == 401
    assert client.get(f"{URL}/1").status_code == 401


def test_post_multipart_then_get_document(
    client, user, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    fields = {"file": file_upload(HELIOS), "format": "usage",
              "map": "timestamp=time,gpus_in_use=running_gpu_num", "gpu_type": "A100"}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(URL, fields, **_basic("ada", "pw-ada-123"))
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["records"] == 5000 and created["status"] == "queued"
    payload = client.get(created["status_url"], **_basic("ada", "pw-ada-123")).json()
    assert payload["status"] == "done" and payload["progress_pct"] == 100
    document = payload["document"]
    assert len(document["hourly_demand"]["firm"]["series"]["A100"]) == 84
    assert document["prices"] and all("as_of" in row for row in document["prices"])
    assert "total" in document["what_to_buy"]["replay"]
    assert "recommendation" not in document and document["hindsight_reference"]["words"]


def test_session_auth_and_mapped_philly(
    user_client, loaded_catalog, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        response = user_client.post(URL, {
            "file": file_upload(PHILLY), "map": PHILLY_MAP, "time_unit": "min",
            "origin": "2017-10-01", "gpu_type": "V100",
        })
    assert response.status_code == 201, response.content
    history = History.objects.get()
    assert history.fmt == "mapped"
    payload = user_client.get(f"{URL}/{history.pk}").json()
    assert payload["status"] == "queued" and payload["document"] is None


def test_bad_file_is_400_with_row_errors(user_client):
    response = user_client.post(URL, {"file": csv_upload(BAD_CSV), "format": "generic"})
    assert response.status_code == 400
    body = response.json()
    assert body["errors"] == [
        {"line": 3, "field": "start", "message": "not an ISO-8601 timestamp"},
        {"line": 4, "field": "gpu_count",
         "message": "not a whole number of GPUs from 0 to 100,000 per job"},
    ]
    assert body["error_count"] == 2 and History.objects.count() == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"map": "start"}, "FIELD=COLUMN"), ({"format": "mapped"}, "mapping")],
)
def test_bad_options_are_400(user_client, fields, message):
    response = user_client.post(URL, {"file": csv_upload(GENERIC_CSV), **fields})
    assert response.status_code == 400 and message in response.json()["detail"]


@pytest.mark.parametrize(("fields", "message"), [
    ({"provider": "zzz"}, "provider: 'zzz' has no current prices (choose one of aws, "),
    ({"region": "mars-1"}, "region: 'mars-1' is not a region of any provider with prices"),
    ({"provider": "gcp", "region": "us-east-1"}, "region: 'us-east-1' is not a region of gcp"),
])
def test_a_place_that_sells_nothing_is_400_not_an_analysis_at_zero_dollars(
    user_client, loaded_catalog, fields, message
):
    response = user_client.post(URL, {"file": csv_upload(GENERIC_CSV), **fields})
    assert response.status_code == 400 and response.json()["detail"].startswith(message)
    assert History.objects.count() == 0


@pytest.mark.parametrize("gpu_type", ["\x00", "A100\x00", "x" * 65])
def test_a_default_gpu_type_the_database_cannot_store_is_400(user_client, gpu_type):
    # a 500 on PostgreSQL (no NUL in text, varchar(64)); SQLite stored it
    response = user_client.post(URL, {"file": csv_upload(GENERIC_CSV), "gpu_type": gpu_type})
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Default GPU type: at most 64 characters, none")
    assert History.objects.count() == 0


def test_a_cell_holding_nul_is_a_row_error(user_client):
    text = GENERIC_CSV.replace("A100-80GB,4", "A100\x0080GB,4").replace(",vision", ",vi\x00sion")
    response = user_client.post(URL, {"file": csv_upload(text)})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 3, "field": "gpu_type", "message": "holds a NUL character (\\x00)"},
        {"line": 4, "field": "team", "message": "holds a NUL character (\\x00)"},
    ]
    assert History.objects.count() == 0


def test_a_billion_gpu_job_is_400_naming_the_row_and_field(user_client):
    # accepted before: its analysis allocated an 11 GiB array and the worker was OOM-killed
    header = "job_id,start,end,gpu_type,gpu_count\n"
    rows = [f"j{i},2025-01-{1 + i // 2:02d}T{12 * (i % 2):02d}:00:00Z,"
            f"2025-01-{1 + i // 2:02d}T{12 * (i % 2) + 5:02d}:00:00Z,H100,"
            f"{1_000_000_000 if i == 30 else 8}\n" for i in range(60)]
    response = user_client.post(URL, {"file": csv_upload(header + "".join(rows))})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 32, "field": "gpu_count",
         "message": "not a whole number of GPUs from 0 to 100,000 per job"},
    ]
    assert History.objects.count() == 0


def test_a_gzipped_upload_is_400_saying_what_the_file_is(user_client):
    import gzip

    from django.core.files.uploadedfile import SimpleUploadedFile

    data = gzip.compress(GENERIC_CSV.encode())
    response = user_client.post(URL, {"file": SimpleUploadedFile("jobs.csv.gz", data)})
    assert response.status_code == 400
    assert "the file is gzip-compressed: decompress it" in response.json()["detail"]
    assert History.objects.count() == 0


def test_size_limit_is_413(user_client, settings):
    settings.UPLOAD_MAX_BYTES = 20
    response = user_client.post(URL, {"file": csv_upload(GENERIC_CSV)})
    assert response.status_code == 413 and "limit" in response.json()["detail"]


def test_other_user_gets_404(user_client, other_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        created = user_client.post(URL, {"file": csv_upload(GENERIC_CSV)}).json()
    assert other_client.get(f"{URL}/{created['id']}").status_code == 404
    assert user_client.get(f"{URL}/{created['id']}").status_code == 200
