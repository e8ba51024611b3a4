"""The web server: the CDX API (and, to come, replay) over a root of collections."""
