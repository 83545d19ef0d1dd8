"""Two replicas of one operator: only the one of the highest priority handles the objects (peering).

    kubectl apply -f kopf/peering.yaml                     # the peering CRDs (shipped with kopf)
    kubectl apply -f examples/06-peering/peering.yaml      # the peering object "example"
    kopf run -A --peering example --priority 100 examples/06-peering/example.py   # acts
    kopf run -A --peering example --priority 0 examples/06-peering/example.py     # pauses: "Pausing operations
                                                                                  # in favour of [<Peer ...>]."
    kopf freeze -A --peering example --lifetime 60 --priority 1000   # pauses both for a minute
    kopf resume -A --peering example                                 # ... or until resumed

When the acting replica is gone (or killed), the other resumes once its keep-alive entry expires:
`settings.peering.lifetime` seconds after its last keep-alive (10 s here; 60 s by default).
"""
from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.peering.lifetime = 10  # keep-alives every few seconds; a replica that is gone is replaced within 10 s


@kopf.on.create('kopfexamples')
def create_fn(name: str, **_: Any) -> dict[str, Any]:
    return {'message': f'{name} is handled by the acting replica'}
