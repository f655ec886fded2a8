"""Holder readers (see analyzer.waits.holders): locks."""
