from django.apps import AppConfig


class StackConfig(AppConfig):
    """The whole product run locally: ``make run`` (``run_stack``), the demo
    organization (``seed_demo``) and the demo conversation (``make demo``,
    ``play_demo``). It sits at the top of the layers beside ``api`` and
    ``evals``; nothing imports it."""

    name = "stack"
    verbose_name = "The local stack and demo"
