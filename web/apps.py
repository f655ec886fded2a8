from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Casebook"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from web import audit, checks, logs, storage  # noqa: F401 - checks: registers the deployment checks

        logs.guard_every_record()  # no secret in a log line, whatever handler writes it
        storage.connect()
        audit.connect_signals()  # login failures and lockouts go to the audit trail
