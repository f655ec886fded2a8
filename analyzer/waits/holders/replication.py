"""Holder readers (see analyzer.waits.holders): replication."""
