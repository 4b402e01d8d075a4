"""Thin typer commands over the library, one module per command group (assembled in cli.py)."""
