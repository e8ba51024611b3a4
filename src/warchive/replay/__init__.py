"""Replay: loading captures, revisits resolved (load, and the modules beside it), and the web server
(app: the CDX API, and replay to come) over a root of collections."""
