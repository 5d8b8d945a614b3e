"""The platform: what every app may import, and which imports no app (ugcsite/tests/test_layout.py
keeps both rules). http (the API's request and answer helpers), apidoc (what the API document
says of each operation, declared beside its handler), errors (the domain's errors and
their codes), redis (the data Redis, its scripts, node grouping), ratelimits, metrics, logs, sql.
The wiring (settings, urls, asgi, celery, openapi, health, middleware, views) sits in ``ugcsite``
itself and imports the apps."""
