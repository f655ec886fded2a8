"""Engineers' accounts: the settings page and personal API tokens."""
