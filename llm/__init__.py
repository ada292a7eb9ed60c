"""The one door to the language model: ``llm.client.llm_complete``. Every
caller (the turn engine, the emergency check, the judge) goes through it; the
backend comes from ``settings.LLM_BACKEND``. Imports no app of the project."""
