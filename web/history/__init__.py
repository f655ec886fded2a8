"""Past cases: full-text search, similar cases, two cases compared."""
