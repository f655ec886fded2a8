"""The team's trends: cases, root causes, repeat customers and time to resolution, week by week."""
