"""A corpus of resource models covering every mapping of docs/models.md: each becomes a CRD that the real
kube-apiserver accepts (tests/e2e/test_typed_corpus.py), and on which pydantic and the server agree.

Each `Case` is one version class (a CRD may have several); `valid` is a valid object's top-level fields
(generated from the schema when None); `server_only` and `pydantic_only` are objects that only one side
refuses, by a validator the other side cannot express (docs/models.md lists them).
"""
import dataclasses
import datetime
import enum
import uuid
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, field_validator
from pydantic.alias_generators import to_camel
from typing_extensions import TypedDict

import kopf

GROUP = 'corpus.kopf.dev'
Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Case:
    cls: type
    valid: Obj | None = None
    server_only: tuple[Obj, ...] = ()     # refused by the server only (CEL, formats)
    pydantic_only: tuple[Obj, ...] = ()   # refused by pydantic only (Python validators)


CASES: list[Case] = []


def case(valid: Obj | None = None, *, server_only: Sequence[Obj] = (), pydantic_only: Sequence[Obj] = (),
         version: str = 'v1', **declared: Any) -> Any:
    def decorate(cls: type) -> type:
        kind = cls.__name__.split('_')[0]
        kopf.custom_resource(GROUP, version, kind=kind, **declared)(cls)
        CASES.append(Case(cls, valid, tuple(server_only), tuple(pydantic_only)))
        return cls
    return decorate


# --- scalars, nesting, optionals ---
class ScalarsSpec(BaseModel):
    text: str
    count: int
    ratio: float
    enabled: bool


@case()
class C01Scalars(BaseModel):
    spec: ScalarsSpec


class Leaf(BaseModel):
    value: int = 0


class Branch(BaseModel):
    leaf: Leaf
    leaves: list[Leaf] = []


class TreeSpec(BaseModel):
    branch: Branch
    maybe: Branch | None = None


@case()
class C02Nested(BaseModel):
    spec: TreeSpec


@dataclasses.dataclass
class DataclassSpec:
    name: str
    size: int = 1
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class DataclassStatus:
    ready: bool = False


@case()
@dataclasses.dataclass
class C03Dataclass:
    spec: DataclassSpec
    status: DataclassStatus | None = None


class TypedDictSpec(TypedDict, total=False):
    name: str
    size: int


@case()
class C04TypedDict(BaseModel):
    spec: TypedDictSpec


class OptionalSpec(BaseModel):
    text: str | None = None
    count: int | None = None
    leaf: Leaf | None = None
    items: list[str] | None = None


@case()
class C05Optional(BaseModel):
    spec: OptionalSpec = OptionalSpec()


# --- collections ---
class ListsSpec(BaseModel):
    names: list[str]
    numbers: tuple[int, ...] = ()
    sequence: Sequence[float] = ()
    nested: list[list[int]] = []


@case()
class C06Lists(BaseModel):
    spec: ListsSpec


class MapsSpec(BaseModel):
    labels: dict[str, str]
    counts: Mapping[str, int] = {}
    leaves: dict[str, Leaf] = {}


@case()
class C07Maps(BaseModel):
    spec: MapsSpec


# --- enums, literals, times ---
class Colour(enum.Enum):
    RED = 'red'
    GREEN = 'green'


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class ChoicesSpec(BaseModel):
    mode: Literal['fast', 'slow']
    port: Literal[80, 443] = 80
    colour: Colour = Colour.RED
    level: Level = Level.LOW
    flag: Literal[True] = True


@case()
class C08Choices(BaseModel):
    spec: ChoicesSpec


class TimesSpec(BaseModel):
    at: datetime.datetime
    on: datetime.date | None = None


@case({'spec': {'at': '2026-12-07T01:02:03Z', 'on': '2026-12-07'}})
class C09Times(BaseModel):
    spec: TimesSpec


class IntOrStringSpec(BaseModel):
    port: int | str
    size: int | str = '1Gi'
    bounded: Annotated[int, Field(ge=0, le=100)] | Annotated[str, Field(max_length=5)] = 5


@case()
class C10IntOrString(BaseModel):
    spec: IntOrStringSpec


class FreeSpec(BaseModel):
    anything: Any = None
    config: dict[str, Any] = {}
    values: list[Any] = []
    bare: dict = {}  # type: ignore[type-arg]


@case({'spec': {'anything': {'a': [1, 'b']}, 'config': {'x': {'y': 1}}, 'values': [1, 'two', {'three': 3}]}})
class C11FreeForm(BaseModel):
    spec: FreeSpec


# --- constraints ---
class NumbersSpec(BaseModel):
    replicas: Annotated[int, Field(ge=1, le=9)]
    above: Annotated[int, Field(gt=0, lt=10)] = 5
    step: Annotated[int, Field(multiple_of=5)] = 10
    weight: Annotated[float, Field(ge=0.5, le=2.5)] = 1.0
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5


@case()
class C12Numbers(BaseModel):
    spec: NumbersSpec


class StringsSpec(BaseModel):
    name: Annotated[str, Field(min_length=3, max_length=10)]
    code: Annotated[str, Field(pattern=r'^[A-Z]{3}-\d{2}$')] = 'ABC-12'
    short: Annotated[str, Field(max_length=3)] = ''


@case()
class C13Strings(BaseModel):
    spec: StringsSpec


class SizesSpec(BaseModel):
    items: Annotated[list[str], Field(min_length=1, max_length=3)]
    labels: Annotated[dict[str, str], Field(min_length=1, max_length=2)] = {'a': 'b'}


@case()
class C14Sizes(BaseModel):
    spec: SizesSpec


class DefaultsSpec(BaseModel):
    number: int = 3
    text: str = 'hello'
    leaf: Leaf = Leaf(value=7)
    names: list[str] = Field(default_factory=lambda: ['a', 'b'])
    mapping: dict[str, int] = Field(default_factory=dict)
    colour: Colour = Colour.GREEN
    optional: int | None = None


@case({'spec': {}})
class C15Defaults(BaseModel):
    spec: DefaultsSpec = DefaultsSpec()


# --- descriptions and names ---
class DescribedSpec(BaseModel):
    """The spec, described by its docstring."""
    size: Annotated[int, Field(description='By Field(description=).')] = 1
    name: str = 'x'
    """By an attribute docstring."""


@case()
class C16Descriptions(BaseModel):
    """A described resource."""
    spec: DescribedSpec


class AliasedSpec(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    ready_replicas: int = 0
    max_surge: int | str = 1


class ExplicitAliasSpec(BaseModel):
    kind_of: Annotated[str, Field(alias='kindOf')] = 'a'
    class_: Annotated[str, Field(alias='class')] = 'b'


@case()
class C17Aliases(BaseModel):
    spec: AliasedSpec
    other: ExplicitAliasSpec = ExplicitAliasSpec()


# --- CEL rules ---
@kopf.Rule('self.minimum <= self.maximum', message='minimum must not exceed maximum')
class RangeSpec(BaseModel):
    minimum: Annotated[int, Field(ge=0, le=100)] = 0
    maximum: Annotated[int, Field(ge=0, le=100)] = 10


@case(server_only=[{'spec': {'minimum': 5, 'maximum': 1}}])
class C18RuleOnClass(BaseModel):
    spec: RangeSpec


class RuleFieldSpec(BaseModel):
    even: Annotated[int, kopf.Rule('self % 2 == 0', message='must be even')] = 2
    name: Annotated[str, Field(max_length=20), kopf.Rule("self.startsWith('x')",
                                                           message_expression="'got ' + self")] = 'x1'


@case(server_only=[{'spec': {'even': 3}}, {'spec': {'name': 'y1'}}])
class C19RuleOnField(BaseModel):
    spec: RuleFieldSpec


class ImmutableSpec(BaseModel):
    key: Annotated[str, Field(max_length=10), kopf.Rule('self == oldSelf', message='immutable',
                                                        reason='FieldValueForbidden')] = 'k'
    pair: Annotated[list[int], Field(max_length=5)] = [1, 2]


@kopf.Rule('size(self.pair) == 2', field_path='.pair', reason='FieldValueInvalid')
class PairSpec(ImmutableSpec):
    pass


@case(server_only=[{'spec': {'pair': [1]}}])
class C20RuleOptions(BaseModel):
    spec: PairSpec


@case(server_only=[{'spec': {'replicas': 3}}])
@kopf.Rule("!has(self.spec) || !('replicas' in self.spec) || self.spec.replicas < 3", message='fewer than 3 at the top')
class C21RuleOnRoot(BaseModel):
    spec: Annotated[dict[str, int], Field(max_length=3)] = {}


# --- list and map semantics ---
class Port(BaseModel):
    name: Annotated[str, Field(max_length=15)]
    protocol: Literal['TCP', 'UDP'] = 'TCP'
    number: int = 80


class ListTypesSpec(BaseModel):
    tags: Annotated[list[str], kopf.ListSet()] = []
    ports: Annotated[list[Port], kopf.ListMap('name')] = []
    pairs: Annotated[list[Port], kopf.ListMap('name', 'protocol')] = []
    whole: Annotated[list[str], kopf.Atomic()] = []


@case({'spec': {'tags': ['a', 'b'], 'ports': [{'name': 'http'}, {'name': 'https', 'number': 443}],
                'pairs': [{'name': 'dns', 'protocol': 'UDP'}, {'name': 'dns', 'protocol': 'TCP'}]}})
class C22ListTypes(BaseModel):
    spec: ListTypesSpec


class MapTypesSpec(BaseModel):
    granular: Annotated[dict[str, str], kopf.Granular()] = {}
    atomic: Annotated[dict[str, str], kopf.Atomic()] = {}
    struct: Annotated[Leaf, kopf.Atomic()] = Leaf()


@kopf.Atomic()
class AtomicLeaf(BaseModel):
    value: int = 0


@case()
class C23MapTypes(BaseModel):
    spec: MapTypesSpec
    other: AtomicLeaf = AtomicLeaf()


# --- free-form parts and embedded objects ---
@kopf.PreserveUnknownFields()
class OpenSpec(BaseModel):
    model_config = ConfigDict(extra='allow')
    known: int = 0


class ExtraAllowSpec(BaseModel):
    model_config = ConfigDict(extra='allow')
    known: str = ''


@case({'spec': {'known': 1, 'unknown': {'x': 1}}, 'extra': {'known': 'a', 'more': True}})
class C24PreserveUnknown(BaseModel):
    spec: OpenSpec
    extra: ExtraAllowSpec = ExtraAllowSpec()
    field: Annotated[Leaf, kopf.PreserveUnknownFields()] = Leaf()


class EmbeddedSpec(BaseModel):
    template: Annotated[dict[str, Any], kopf.EmbeddedResource()]


@case({'spec': {'template': {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}}}})
class C25Embedded(BaseModel):
    spec: EmbeddedSpec


class EmbeddedMeta(BaseModel):
    apiVersion: str
    kind: str
    metadata: dict[str, Any] = {}
    data: dict[str, str] = {}


class EmbeddedModelSpec(BaseModel):
    object: Annotated[EmbeddedMeta, kopf.EmbeddedResource()]


@case({'spec': {'object': {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}, 'data': {}}}})
class C26EmbeddedModel(BaseModel):
    spec: EmbeddedModelSpec


# --- formats ---
class FormatsSpec(BaseModel):
    host: Annotated[str, kopf.Format('hostname')] = 'example.com'
    ident: uuid.UUID = uuid.UUID('12345678-1234-5678-1234-567812345678')


@case(server_only=[{'spec': {'host': 'not a hostname!'}}])
class C27Formats(BaseModel):
    spec: FormatsSpec


# --- Python validators: pydantic only ---
def _lower(value: str) -> str:
    if value != value.lower():
        raise ValueError('must be lower-case')
    return value


class ValidatedSpec(BaseModel):
    name: Annotated[str, AfterValidator(_lower)] = 'a'
    size: int = 1

    @field_validator('size')
    @classmethod
    def _odd(cls, value: int) -> int:
        if value % 2 == 0:
            raise ValueError('must be odd')
        return value


@case(pydantic_only=[{'spec': {'name': 'UPPER'}}, {'spec': {'size': 2}}])
class C28PythonValidators(BaseModel):
    spec: ValidatedSpec = ValidatedSpec()


class RootItems(RootModel[list[int]]):
    pass


class RootSpec(BaseModel):
    items: RootItems = RootItems([])


@case()
class C29RootModel(BaseModel):
    spec: RootSpec


# --- the CRD's own options: names, scope, subresources, columns, fields ---
class ScaleSpec(BaseModel):
    replicas: Annotated[int, Field(ge=0)] = 1
    engine: Literal['a', 'b'] = 'a'


class ScaleStatus(BaseModel):
    replicas: int = 0
    selector: str = ''
    started: datetime.datetime | None = None


@case(scale=kopf.Scale(label_selector='.status.selector'))
class C30Scale(BaseModel):
    spec: ScaleSpec
    status: ScaleStatus | None = None


@case(printer_columns=[kopf.PrinterColumn('Replicas', '.spec.replicas'),
                       kopf.PrinterColumn('Engine', '.spec.engine', description='The engine.', priority=1),
                       kopf.PrinterColumn('Started', '.status.started'),
                       kopf.PrinterColumn('Ready', '.status.conditions[?(@.type=="Ready")].status', type='string')])
class C31Columns(BaseModel):
    spec: ScaleSpec
    status: ScaleStatus | None = None


@case(status_subresource=False)
class C32NoStatusSubresource(BaseModel):
    spec: ScaleSpec
    status: ScaleStatus | None = None


@case(scope='Cluster', shortnames=['c33', 'cluster33'], categories=['corpus'])
class C33ClusterScoped(BaseModel):
    spec: ScaleSpec


@case(selectable_fields=['.spec.engine'], singular='thirtyfour', plural='c34selectables')
class C34Selectable(BaseModel):
    spec: ScaleSpec


@case()
class C35DataOnly(BaseModel):
    data: dict[str, str] = {}
    binary: Annotated[list[str], Field(max_length=2)] = []


# --- several versions of one kind (conversion: None) ---
class V1Spec(BaseModel):
    size: int = 1


class V2Spec(V1Spec):
    backups: bool = False


@case(version='v1', deprecated=True, deprecation_warning='corpus v1 is deprecated')
class C36Versions_V1(BaseModel):
    spec: V1Spec


@case(version='v2', storage=True)
class C36Versions_V2(BaseModel):
    spec: V2Spec


@case(version='v1beta1', served=False)
class C36Versions_V1beta1(BaseModel):
    spec: V1Spec


class Tiered(BaseModel):
    name: Annotated[str, Field(max_length=10)] = 'n'
    tier: Literal['gold', 'silver'] = 'gold'


@case(version='v1alpha1')
class C37TwoVersions_A(BaseModel):
    spec: Tiered


@case(version='v1', storage=True)
class C37TwoVersions_B(BaseModel):
    spec: Annotated[Tiered, kopf.Rule("self.name != 'forbidden'")]


# --- deeper and wider ---
class Level3(BaseModel):
    deep: Annotated[str, Field(max_length=5)] = 'd'


class Level2(BaseModel):
    level3: Level3 = Level3()
    many: Annotated[list[Level3], Field(max_length=3)] = []


class Level1(BaseModel):
    level2: Level2 = Level2()
    by_name: dict[str, Level2] = {}


@case()
class C38Deep(BaseModel):
    spec: Level1


class NullableNested(BaseModel):
    leaf: Leaf | None = None
    leaves: list[Leaf | None] = []
    mapping: dict[str, int | None] = {}


@case({'spec': {'leaf': None, 'leaves': [{'value': 1}, None], 'mapping': {'a': None, 'b': 2}}})
class C39NullableNested(BaseModel):
    spec: NullableNested


class EnumsInLists(BaseModel):
    colours: list[Colour] = []
    levels: Annotated[list[Level], kopf.ListSet()] = []
    modes: dict[str, Literal['on', 'off']] = {}


@case({'spec': {'colours': ['red', 'green'], 'levels': [1, 2], 'modes': {'a': 'on'}}})
class C40EnumsInLists(BaseModel):
    spec: EnumsInLists


class WideSpec(BaseModel):
    """A realistic spec: 20 fields, 2 levels (also the benchmark's model)."""
    image: Annotated[str, Field(max_length=200)] = 'nginx:1.27'
    replicas: Annotated[int, Field(ge=0, le=100)] = 1
    port: int | str = 8080
    env: dict[str, str] = {}
    args: list[str] = []
    cpu: Annotated[str, Field(pattern=r'^\d+m?$')] = '100m'
    memory: Annotated[str, Field(pattern=r'^\d+(Mi|Gi)$')] = '128Mi'
    tier: Literal['web', 'worker', 'batch'] = 'web'
    paused: bool = False
    schedule: str | None = None
    ports: Annotated[list[Port], kopf.ListMap('name'), Field(max_length=10)] = []
    scaling: RangeSpec = RangeSpec()
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    timeout: Annotated[float, Field(gt=0)] = 30.0
    retries: Annotated[int, Field(ge=0, le=10)] = 3
    owner: str = 'team'
    colour: Colour = Colour.RED
    leaf: Leaf = Leaf()
    created: datetime.datetime | None = None


@case()
class C41Wide(BaseModel):
    spec: WideSpec
    status: DataclassStatus | None = None


class SetsOfNumbers(BaseModel):
    ints: Annotated[list[int], kopf.ListSet(), Field(max_length=4)] = []
    floats: Annotated[list[float], kopf.ListSet()] = []


@case({'spec': {'ints': [1, 2, 3], 'floats': [0.5]}})
class C42Sets(BaseModel):
    spec: SetsOfNumbers
