"""The `studio` command line."""
