"""pytest in bench/ reads the doctests of the benchmark scripts. ``locustfile.py`` is not imported: locust
monkey-patches the standard library (gevent) on import, which breaks once pytest has loaded ssl; it is
run by ``locust -f bench/locustfile.py`` (bench/README.md)."""

collect_ignore = ["locustfile.py"]
