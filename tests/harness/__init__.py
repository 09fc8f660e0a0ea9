"""Test harness for the real agent CLIs: fake model APIs, isolated CLI runs, fixtures."""
