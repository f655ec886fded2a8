from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Casebook"
    default_auto_field = "django.db.models.BigAutoField"
