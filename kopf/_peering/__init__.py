"""Peering (`kopf run --peering NAME`): several operators on one peering object; the highest priority acts.

Modules:
- `priorities`  who is alive, who pauses whom, when to keep alive, from the peering object's status (pure)
- `keepalives`  the peering objects read and written: keep-alives, pausing this operator, `kopf freeze/resume`
"""
