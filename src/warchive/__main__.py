"""`python -m warchive` runs the warchive command."""

from .cli import run

if __name__ == "__main__":   # not when a spawned process (a Dask worker of --scheduler local) imports it
    run()
