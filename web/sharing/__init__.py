"""Share links: a customer's read-only, redacted view of one case."""
