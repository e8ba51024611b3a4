"""Coverage-guided fuzz harnesses (atheris) for warchive's parsers and kernels; see harnesses.py."""
