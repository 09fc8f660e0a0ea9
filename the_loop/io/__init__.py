"""Low-level helpers for every layer: atomic writes, decoding, fences, YAML, templates, time."""
