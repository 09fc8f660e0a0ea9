"""Fixtures of the board tests: a browser, when Debian's chromium is installed."""
