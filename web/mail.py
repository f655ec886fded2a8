"""The development mail backend: every message written to a file of its own under ``var/mail/``,
readable by its owner only.

A mail may hold a working password-reset link: printed on the console (Django's console backend) it
went into the web's log file, where anyone who reads logs could use it. Django's file backend keeps
mail out of the log, but creates its files with the process's umask (0644 on most systems) and its
folder likewise; here the folder is 0700 and each file is created 0600 (``os.open`` with the mode,
so no moment exists where the file is readable by others).
"""

from __future__ import annotations

import os

from django.core.mail.backends.filebased import EmailBackend

#: Owner-only modes of the mail folder and of each message file.
FOLDER_MODE, FILE_MODE = 0o700, 0o600


class PrivateFileBackend(EmailBackend):
    """Django's file-based backend (``EMAIL_FILE_PATH``, one file per connection) with owner-only
    modes. Raises ``ImproperlyConfigured`` as Django's does when the folder cannot be made or written."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        os.chmod(self.file_path, FOLDER_MODE)

    def open(self) -> bool:
        if self.stream is not None:
            return False
        fd = os.open(self._get_filename(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        os.fchmod(fd, FILE_MODE)  # a file made earlier by another backend keeps no wider mode
        self.stream = os.fdopen(fd, "ab")
        return True
