"""`python -m warchive` runs the warchive command."""

from .cli import run

run()
