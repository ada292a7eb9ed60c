from django.apps import AppConfig


class PropertiesConfig(AppConfig):
    name = "properties"
    verbose_name = "Landlords and properties"
