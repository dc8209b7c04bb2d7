"""Cookiecutter templates rendered by `opsdk new` (package data, not code)."""
