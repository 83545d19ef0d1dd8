"""Prometheus metrics of one operator (`kopf run --metrics [HOST:]PORT`, `settings.metrics`).

Modules:
- `instruments`  the endpoint's address, the labels' bounds, the buckets; the no-op `Metrics` (pure)
- `prometheus`   the metrics themselves (`prometheus_client`, loaded only when metrics are on) and their hooks
"""
