"""A typed operator: the models of models.py are its CRD (two versions, a CEL rule) and its handlers' types.

    kopf run -A --local-cluster --install-crds examples/24-typed/example.py

`--install-crds` creates (or updates) the CRD `databases.typed.kopf.dev` at startup; `kopf crd
examples/24-typed/models.py` prints it (checked in as crds.yaml). The handlers receive parsed models:
`spec` is a `DatabaseSpec`, and the status is written through the `DatabaseStatus` model. An object
that does not parse (e.g. one created before a stricter model) is a permanent error of the handler,
naming the field. The CEL rule (`minReplicas <= maxReplicas`) is checked by the API server: such an
object is refused before any handler sees it.
"""
from models import Database, DatabaseSpec, DatabaseStatus

import kopf


@kopf.on.create(Database)
def create_fn(spec: DatabaseSpec, name: str, patch: kopf.Patch, logger: kopf.Logger, **_: object) -> None:
    users = ', '.join(f'{user.name} ({user.role})' for user in spec.users) or 'no users'
    logger.info(f'Creating a {spec.engine} database {name} with {spec.scaling.minReplicas} replicas, {users}.')
    patch.status = DatabaseStatus(phase='Creating', replicas=spec.scaling.minReplicas)


@kopf.on.field(Database, field='spec.scaling')
def scale_fn(spec: DatabaseSpec, status: DatabaseStatus | None, patch: kopf.Patch, logger: kopf.Logger,
             **_: object) -> None:
    replicas = max(spec.scaling.minReplicas, min((status.replicas if status else None) or 0, spec.scaling.maxReplicas))
    logger.info(f'Scaling to {replicas} replicas (between {spec.scaling.minReplicas} and {spec.scaling.maxReplicas}).')
    patch.status = DatabaseStatus(phase='Ready', replicas=replicas)
