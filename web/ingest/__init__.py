"""The ingest of an upload: claimed, parsed (in one task or fanned out), analyzed and published; the
sweeper."""
