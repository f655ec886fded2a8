"""Notifications of a finished case: e-mail to whoever uploaded (emails.py), the team's outgoing
webhooks (webhooks.py), both sent by Celery after the case's final state is committed (tasks.py);
and a team's ticket links (tickets.py). Writes go through services.py."""
