"""What a share link serves, redacted: statements as fingerprints (``literals``), passwords masked
(``parsers.passwords``, as everywhere a case is shown), hosts, users, schemas and the server's names as
pseudonyms (``redactor``), and each format's raw lines by what its parser declares sensitive (``formats``).
Plain Python: the ORM stays in web/sharing/services.py."""
