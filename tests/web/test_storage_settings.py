"""``CASEBOOK_STORAGE_URL`` read into Django's ``STORAGES`` (web/settings.py ``_storage``): the file
default, S3 with its endpoint and region, and a clear ``ImproperlyConfigured`` naming the variable for
anything malformed."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from web.settings import _storage

MEDIA = Path("/srv/casebook/media")


@pytest.fixture(autouse=True)
def _no_s3_environment(monkeypatch) -> None:
    for name in ("CASEBOOK_S3_ENDPOINT_URL", "CASEBOOK_S3_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)


def test_a_file_url_is_the_media_folder() -> None:
    storage, root = _storage("file:///var/lib/casebook%20media", MEDIA)
    assert storage == {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    assert root == Path("/var/lib/casebook media")


def test_an_s3_url_with_endpoint_and_region(monkeypatch) -> None:
    monkeypatch.setenv("CASEBOOK_S3_ENDPOINT_URL", "http://127.0.0.1:9000")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    storage, root = _storage("s3://casebook-uploads/prod/media/", MEDIA)
    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"
    assert storage["OPTIONS"] == {
        "bucket_name": "casebook-uploads",
        "location": "prod/media",
        "endpoint_url": "http://127.0.0.1:9000",
        "region_name": "eu-west-3",
        "file_overwrite": False,
        "default_acl": None,
        "querystring_auth": True,
        "addressing_style": "path",
    }
    assert root == MEDIA
    monkeypatch.setenv("CASEBOOK_S3_REGION", "us-east-2")  # ours wins over boto3's variable
    assert _storage("s3://casebook-uploads", MEDIA)[0]["OPTIONS"]["region_name"] == "us-east-2"


def test_aws_s3_itself_needs_no_endpoint() -> None:
    options = _storage("s3://casebook-uploads", MEDIA)[0]["OPTIONS"]
    assert (
        options["endpoint_url"] is None and options["addressing_style"] is None and options["location"] == ""
    )


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file://relative/path", "use file:///absolute/path"),
        ("/var/media", "use file:///absolute/path or s3://bucket/prefix"),
        ("gs://bucket/x", "use file:///absolute/path or s3://bucket/prefix"),
        ("s3://", "is not an S3 bucket name"),
        ("s3://Upper_Case/x", "is not an S3 bucket name"),
        ("s3://bucket/a/../b", "is not a plain key prefix"),
        ("s3://bucket/a//b", "is not a plain key prefix"),
        ("s3://bucket/x?region=eu", "no query or fragment"),
    ],
)
def test_a_malformed_url_names_the_variable(url: str, says: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="^CASEBOOK_STORAGE_URL=") as raised:
        _storage(url, MEDIA)
    assert says in str(raised.value)


@pytest.mark.parametrize("endpoint", ["127.0.0.1:9000", "ftp://host", "http://host/path"])
def test_a_malformed_endpoint_names_its_variable(endpoint: str, monkeypatch) -> None:
    monkeypatch.setenv("CASEBOOK_S3_ENDPOINT_URL", endpoint)
    with pytest.raises(ImproperlyConfigured, match="^CASEBOOK_S3_ENDPOINT_URL="):
        _storage("s3://bucket/x", MEDIA)
