"""The shipped Rego rule pack (data files only; located at runtime through this package)."""
