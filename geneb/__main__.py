"""``python -m geneb`` runs the CLI."""

from geneb.cli import main

main()
