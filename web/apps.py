from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Casebook"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from web import checks, storage  # noqa: F401 - registers the deployment checks

        storage.connect()
