"""SQL statements as the Percona Toolkit reads them: query fingerprints (``fingerprint``, pt-fingerprint)
and the slow log's digest by class (``querydigest``, pt-query-digest)."""
