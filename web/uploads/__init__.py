"""Customer upload links: ``/u/<token>/`` takes a bundle with no account (tus resumable uploads)."""
