"""Cost and size intervals as cel-go computes them: (min, max) pairs of uint64 that saturate."""
from __future__ import annotations

import math

MAX = 2 ** 64 - 1
Size = tuple[int, int]
UNKNOWN: Size = (0, MAX)


def sat(x: int) -> int:
    return MAX if x > MAX else x


def add(a: Size, b: Size) -> Size:
    return sat(a[0] + b[0]), sat(a[1] + b[1])


def mul(a: Size, b: Size) -> Size:
    return sat(a[0] * b[0]), sat(a[1] * b[1])


def factor(x: int, f: float) -> int:
    xf = float(x)
    if xf > 0 and f > 0 and xf > MAX / f:
        return MAX
    ceil = math.ceil(xf * f)
    if ceil >= 2.0 ** 64:
        return MAX
    return int(ceil)


def by_factor(a: Size, f: float) -> Size:
    return factor(a[0], f), factor(a[1], f)


def union(a: Size, b: Size) -> Size:
    return min(a[0], b[0]), max(a[1], b[1])


def fixed(n: int) -> Size:
    return n, n
