from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Casebook"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from web import audit, checks, storage  # noqa: F401 - checks: registers the deployment checks

        storage.connect()
        audit.connect_signals()  # login failures and lockouts go to the audit trail
