"""The configuration: the project root, loading, schema validation, defaults, overrides."""
