"""``manage.py create_bucket``: make the S3 bucket of ``CASEBOOK_STORAGE_URL`` when it does not exist
yet (an S3-compatible server started empty, as the one of docker-compose.yml); with the file storage,
make its folder. Run by ``scripts/start migrate``; running it again changes nothing."""

from __future__ import annotations

from botocore.exceptions import ClientError
from django.conf import settings
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Create the storage's S3 bucket (or media folder) if it is missing."

    def handle(self, *args: object, **opts: object) -> None:
        if not hasattr(default_storage, "bucket_name"):  # FileSystemStorage
            root = settings.MEDIA_ROOT
            root.mkdir(parents=True, exist_ok=True)
            self.stdout.write(f"file storage in {root}")
            return
        name = default_storage.bucket_name
        client = default_storage.connection.meta.client
        try:
            client.head_bucket(Bucket=name)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket"):
                raise CommandError(f"bucket {name!r}: {exc}") from exc
        else:
            self.stdout.write(f"bucket {name!r} exists")
            return
        region = client.meta.region_name
        extra = (
            {}
            if region in (None, "us-east-1")
            else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        )
        try:
            client.create_bucket(Bucket=name, **extra)
        except ClientError as exc:
            raise CommandError(f"bucket {name!r} could not be created: {exc}") from exc
        self.stdout.write(f"bucket {name!r} created")
