"""Cases: their pages, the actions on them (services) and the reads behind pages and API (selectors)."""
