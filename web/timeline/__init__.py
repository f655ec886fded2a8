"""A case's stored timeline: series and their levels of detail, the charts and moments read from them."""
