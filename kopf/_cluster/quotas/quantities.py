"""Kubernetes quantities (`500m`, `64Mi`, `2`): parsed exactly, added, compared, and written canonically.

As k8s.io/apimachinery's `resource.Quantity`: the suffix sets the format (binary `Ki`…`Ei`, decimal
`n`…`E`, or an exponent `e3`); a sum keeps the format of its first non-zero term; the canonical text
is the largest suffix that keeps the number whole (`1500m`, `2k`, `1536Mi`; binary only for whole
values of 1024 or more, else decimal). Pure: no I/O.
"""
import dataclasses
import re
from fractions import Fraction

BINARY = {'Ki': 1, 'Mi': 2, 'Gi': 3, 'Ti': 4, 'Pi': 5, 'Ei': 6}
DECIMAL = {'n': -9, 'u': -6, 'm': -3, '': 0, 'k': 3, 'M': 6, 'G': 9, 'T': 12, 'P': 15, 'E': 18}
_SYNTAX = re.compile(r'([+-]?(?:\d+\.?\d*|\.\d+))((?:[eE][+-]?\d+)|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)')


@dataclasses.dataclass(frozen=True)
class Quantity:
    value: Fraction
    binary: bool = False

    def __add__(self, other: 'Quantity') -> 'Quantity':
        return Quantity(self.value + other.value, other.binary if self.value == 0 else self.binary)

    def __sub__(self, other: 'Quantity') -> 'Quantity':
        return Quantity(self.value - other.value, other.binary if self.value == 0 else self.binary)

    def __str__(self) -> str:
        return render(self)


ZERO = Quantity(Fraction(0))
ONE = Quantity(Fraction(1))


def parse(text: object) -> Quantity | None:
    """A quantity from its text (or a plain number); None if it is not one."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return Quantity(Fraction(str(text)))
    found = _SYNTAX.fullmatch(str(text).strip()) if isinstance(text, str) else None
    if found is None:
        return None
    number, suffix = Fraction(found.group(1)), found.group(2)
    if suffix in BINARY:
        return Quantity(number * 1024 ** BINARY[suffix], binary=True)
    if suffix[:1] in ('e', 'E'):
        return Quantity(number * Fraction(10) ** int(suffix[1:]))
    return Quantity(number * Fraction(10) ** DECIMAL[suffix])


def render(quantity: Quantity) -> str:
    value = quantity.value
    if value == 0:
        return '0'
    if quantity.binary and abs(value) >= 1024 and value.denominator == 1:
        number, power = int(value), 0
        while power < 6 and number % 1024 == 0:
            number, power = number // 1024, power + 1
        return f'{number}{next(k for k, v in BINARY.items() if v == power) if power else ""}'
    scaled = -(-value * 10 ** 9 // 1) if value > 0 else value * 10 ** 9 // 1   # nano precision, rounded up
    number, exponent = int(scaled), -9
    while exponent < 18 and number % 1000 == 0:
        number, exponent = number // 1000, exponent + 3
    return f'{number}{next(k for k, v in DECIMAL.items() if v == exponent)}'


def canonical(text: object) -> object:
    """The canonical text of a quantity (anything else as it is)."""
    found = parse(text)
    return render(found) if found is not None else text
