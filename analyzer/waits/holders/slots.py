"""Holder readers (see analyzer.waits.holders): slots."""
