"""The models of the typed example: one kind (`Database`), two versions, a CEL rule, and the status.

`kopf crd examples/24-typed/models.py -o examples/24-typed` writes crds.yaml's content (checked in;
tests/e2e/test_examples.py regenerates it and fails on a difference).
"""
import dataclasses
from typing import Annotated, Literal

from pydantic import BaseModel, Field

import kopf


class User(BaseModel):
    """A database user."""
    name: Annotated[str, Field(min_length=1, max_length=63, pattern=r'^[a-z][a-z0-9_]*$')]
    role: Literal['owner', 'reader'] = 'reader'


@kopf.Rule('self.minReplicas <= self.maxReplicas', message='minReplicas must not exceed maxReplicas')
class Scaling(BaseModel):
    """How many replicas: at least, at most."""
    minReplicas: Annotated[int, Field(ge=1, le=9)] = 1
    maxReplicas: Annotated[int, Field(ge=1, le=9)] = 3


class DatabaseSpecV1(BaseModel):
    """The desired database (v1)."""
    engine: Literal['postgres', 'mysql'] = 'postgres'
    """The database engine."""
    storage: int | str = '1Gi'
    """The volume's size: bytes, or a quantity like 10Gi."""
    scaling: Scaling = Scaling()
    users: Annotated[list[User], kopf.ListMap('name'), Field(max_length=20)] = []


class DatabaseSpec(DatabaseSpecV1):
    """The desired database (v2: backups added; a v1 object is a valid v2 object)."""
    backups: bool = False
    """Whether to back the database up nightly."""


@dataclasses.dataclass
class DatabaseStatus:
    phase: str | None = None
    replicas: int | None = None


COLUMNS = [kopf.PrinterColumn('Engine', '.spec.engine'), kopf.PrinterColumn('Phase', '.status.phase'),
           kopf.PrinterColumn('Replicas', '.status.replicas')]


@kopf.custom_resource('typed.kopf.dev', 'v1', kind='Database', shortnames=['tdb'], printer_columns=COLUMNS,
                      deprecated=True, deprecation_warning='typed.kopf.dev/v1 Database is deprecated; use v2')
class DatabaseV1(BaseModel):
    spec: DatabaseSpecV1
    status: DatabaseStatus | None = None


@kopf.custom_resource('typed.kopf.dev', 'v2', kind='Database', shortnames=['tdb'], printer_columns=COLUMNS,
                      storage=True)
class Database(BaseModel):
    spec: DatabaseSpec
    status: DatabaseStatus | None = None
