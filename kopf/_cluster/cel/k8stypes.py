"""Kubernetes' CEL types and their libraries: quantities, URLs, IP addresses and CIDRs.

`quantity('1.5Gi')` is parsed as `resource.ParseQuantity` parses it (exact decimal arithmetic, nano
precision rounded up); `url()` accepts what Go's `url.ParseRequestURI` accepts; `ip()`/`cidr()` what
`netip.ParseAddr`/`ParsePrefix` accept, without zones and IPv4-mapped IPv6 addresses. Error texts are the
libraries'.
"""
from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from fractions import Fraction
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celvalues import EvalError, register_type
from kopf._cluster.cel.decls import Env, Overload
from kopf._cluster.cel.stdlib import fail

B, INT, S, D = celtypes.BoolType, celtypes.IntType, celtypes.StringType, celtypes.DoubleType
QuantityType = celtypes.object_type('kubernetes.Quantity', {})
URLType = celtypes.object_type('kubernetes.URL', {})
IPType = celtypes.opaque('net.IP')
CIDRType = celtypes.opaque('net.CIDR')

QUANTITY = re.compile(r'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$')
BINARY = {'Ki': 2 ** 10, 'Mi': 2 ** 20, 'Gi': 2 ** 30, 'Ti': 2 ** 40, 'Pi': 2 ** 50, 'Ei': 2 ** 60}
DECIMAL = {'n': Fraction(1, 10 ** 9), 'u': Fraction(1, 10 ** 6), 'm': Fraction(1, 1000), '': Fraction(1),
           'k': Fraction(10 ** 3), 'M': Fraction(10 ** 6), 'G': Fraction(10 ** 9), 'T': Fraction(10 ** 12),
           'P': Fraction(10 ** 15), 'E': Fraction(10 ** 18)}


class Quantity:
    __slots__ = ('value',)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


def parse_quantity(text: str) -> Quantity:
    if not text:
        raise EvalError('quantities must match the regular expression '
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    m = QUANTITY.match(text)
    if m is None:
        raise EvalError('quantities must match the regular expression '
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    number, suffix = m.groups()
    if number.count('.') > 1 or number.strip('+-') in ('', '.'):
        raise EvalError('unable to parse numeric part of quantity')
    try:
        amount = Fraction(number)
    except ValueError:
        raise EvalError('unable to parse numeric part of quantity') from None
    if suffix in BINARY:
        amount *= BINARY[suffix]
    elif suffix in DECIMAL:
        amount *= DECIMAL[suffix]
    elif re.fullmatch(r'[eE][-+]?[0-9]+', suffix):
        exponent = int(suffix[1:])
        amount *= Fraction(10) ** exponent
    else:
        raise EvalError("unable to parse quantity's suffix")
    nanos = amount * 10 ** 9
    if nanos.denominator != 1:   # at most nano precision: rounded away from zero
        rounded = math.ceil(abs(nanos))
        amount = Fraction(rounded if nanos > 0 else -rounded, 10 ** 9)
    return Quantity(amount)


def quantity(text: Any) -> Quantity:
    if type(text) is not str:
        raise fail()
    return parse_quantity(text)


def is_quantity(text: Any) -> bool:
    try:
        quantity(text)
    except EvalError:
        return False
    return True


def as_integer(q: Quantity) -> int:
    v = q.value
    if v.denominator != 1 or not -2 ** 63 <= v.numerator < 2 ** 63:
        raise EvalError('cannot convert value to integer')
    return v.numerator


def is_integer(q: Quantity) -> bool:
    return q.value.denominator == 1 and -2 ** 63 <= q.value.numerator < 2 ** 63


def compare_to(a: Quantity, b: Quantity) -> int:
    return (a.value > b.value) - (a.value < b.value)


def q_add(a: Quantity, b: Any) -> Quantity:
    return Quantity(a.value + (b.value if isinstance(b, Quantity) else Fraction(b)))


def q_sub(a: Quantity, b: Any) -> Quantity:
    return Quantity(a.value - (b.value if isinstance(b, Quantity) else Fraction(b)))


# ---- URLs ----

class URL:
    __slots__ = ('parts', 'text')

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urllib.parse.urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def parse_request_uri(text: str) -> None:
    """Go's `url.ParseRequestURI` acceptance: an absolute URL, or an absolute path."""
    if any(ord(c) < 0x20 or c == '\x7f' for c in text):
        raise EvalError(f'parse "{text}": net/url: invalid control character in URL')
    scheme = re.match(r'^([a-zA-Z][a-zA-Z0-9+.-]*):', text)
    if scheme is None:
        if re.match(r'^[0-9+.-]', text) and ':' in text.split('/')[0]:
            raise EvalError(f'parse "{text}": first path segment in URL cannot contain colon')
        if not text.startswith('/'):
            raise EvalError(f'parse "{text}": invalid URI for request')
        return
    rest = text[scheme.end():]
    if not rest.startswith('/') and rest:
        return   # opaque URLs (mailto:x) are accepted
    if rest.startswith('//'):
        host = rest[2:].split('/', 1)[0].split('?', 1)[0].split('#', 1)[0].rsplit('@', 1)[-1]
        if ' ' in host:
            raise EvalError(f'parse "{text}": invalid character " " in host name')


def url(text: Any) -> URL:
    if type(text) is not str:
        raise fail()
    try:
        parse_request_uri(text)
    except EvalError as e:
        raise EvalError(f'URL parse error during conversion from string: {e.message}') from None
    return URL(text)


def is_url(text: Any) -> bool:
    try:
        parse_request_uri(text)
    except EvalError:
        return False
    return True


def url_host(u: URL) -> str:
    return u.parts.netloc.rsplit('@', 1)[-1]


def url_hostname(u: URL) -> str:
    host = url_host(u)
    if host.startswith('['):
        return host[1:host.index(']')] if ']' in host else host[1:]
    return host.split(':', 1)[0] if host.count(':') <= 1 else host


def url_port(u: URL) -> str:
    host = url_host(u)
    if host.startswith('['):
        tail = host[host.index(']') + 1:] if ']' in host else ''
        return tail[1:] if tail.startswith(':') else ''
    return host.split(':', 1)[1] if host.count(':') == 1 else ''


def url_query(u: URL) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in urllib.parse.parse_qsl(u.parts.query, keep_blank_values=True):
        out.setdefault(key, []).append(value)
    return out


# ---- IPs and CIDRs ----

class IP:
    __slots__ = ('addr',)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)


class CIDR:
    __slots__ = ('addr', 'prefix')

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address, prefix: int) -> None:
        self.addr = addr
        self.prefix = prefix

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and (other.addr, other.prefix) == (self.addr, self.prefix)

    def __hash__(self) -> int:
        return hash((self.addr, self.prefix))

    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network((self.addr, self.prefix), strict=False)


def parse_ip(text: str) -> IP:
    if '%' in text:
        raise EvalError(f'IP address "{text}" with zone value is not allowed')
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise EvalError(f'IP Address "{text}" parse error during conversion from string: '
                        f'ParseAddr("{text}"): unable to parse IP') from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise EvalError(f'IPv4-mapped IPv6 address "{text}" is not allowed')
    return IP(addr)


def ip(text: Any) -> IP:
    if isinstance(text, CIDR):
        return IP(text.addr)
    if type(text) is not str:
        raise fail()
    return parse_ip(text)


def is_ip(text: Any) -> bool:
    try:
        ip(text)
    except EvalError:
        return False
    return True


def parse_cidr(text: str) -> CIDR:
    prefix_error = 'network address parse error during conversion from string: network address parse error ' \
        f'during conversion from string: netip.ParsePrefix("{text}"): '
    addr_text, slash, bits = text.partition('/')
    if not slash:
        raise EvalError(prefix_error + "no '/'")
    if '%' in addr_text:
        raise EvalError(prefix_error + 'IPv6 zones cannot be present in a prefix')
    try:
        addr = ipaddress.ip_address(addr_text)
    except ValueError:
        raise EvalError(prefix_error + f'ParseAddr("{addr_text}"): unable to parse IP') from None
    if not bits.isdigit() or (len(bits) > 1 and bits[0] == '0'):
        raise EvalError(prefix_error + f'bad bits after slash: "{bits}"')
    if int(bits) > addr.max_prefixlen:
        raise EvalError(prefix_error + 'prefix length out of range')
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise EvalError(f'network address parse error during conversion from string: IPv4-mapped IPv6 address '
                        f'"{text}" is not allowed')
    return CIDR(addr, int(bits))


def cidr(text: Any) -> CIDR:
    if type(text) is not str:
        raise fail()
    return parse_cidr(text)


def is_cidr(text: Any) -> bool:
    try:
        cidr(text)
    except EvalError:
        return False
    return True


def contains_ip(c: CIDR, other: Any) -> bool:
    address = ip(other) if isinstance(other, str) else other
    return address.addr.version == c.addr.version and address.addr in c.network()


def contains_cidr(c: CIDR, other: Any) -> bool:
    inner = cidr(other) if isinstance(other, str) else other
    return (inner.addr.version == c.addr.version and inner.prefix >= c.prefix
            and inner.network().subnet_of(c.network()))   # type: ignore[arg-type]


def masked(c: CIDR) -> CIDR:
    return CIDR(c.network().network_address, c.prefix)


def ip_text(value: Any) -> str:
    if isinstance(value, IP):
        return str(value.addr)
    if isinstance(value, CIDR):
        return f'{value.addr}/{value.prefix}'
    raise fail()


def is_canonical(text: Any) -> bool:
    return bool(str(parse_ip(text).addr) == text)


def declare(env: Env) -> None:
    register_type(Quantity, QuantityType)
    register_type(URL, URLType)
    register_type(IP, IPType)
    register_type(CIDR, CIDRType)
    f = env.add_function
    m = {'member': True}
    Q = QuantityType
    f('quantity', Overload('string_to_quantity', [S], Q, quantity))
    f('isQuantity', Overload('is_quantity_string', [S], B, is_quantity))
    f('sign', Overload('quantity_sign', [Q], INT, lambda q: (q.value > 0) - (q.value < 0), **m))
    f('isGreaterThan', Overload('quantity_is_greater_than', [Q, Q], B, lambda a, b: a.value > b.value, **m))
    f('isLessThan', Overload('quantity_is_less_than', [Q, Q], B, lambda a, b: a.value < b.value, **m))
    f('compareTo', Overload('quantity_compare_to', [Q, Q], INT, compare_to, **m))
    f('asApproximateFloat', Overload('quantity_get_float', [Q], D, lambda q: float(q.value), **m))
    f('asInteger', Overload('quantity_get_int', [Q], INT, as_integer, **m))
    f('isInteger', Overload('quantity_is_integer', [Q], B, is_integer, **m))
    f('add', Overload('quantity_add', [Q, Q], Q, q_add, **m), Overload('quantity_add_int', [Q, INT], Q, q_add, **m))
    f('sub', Overload('quantity_sub', [Q, Q], Q, q_sub, **m), Overload('quantity_sub_int', [Q, INT], Q, q_sub, **m))
    f('url', Overload('string_to_url', [S], URLType, url))
    f('getScheme', Overload('url_get_scheme', [URLType], S, lambda u: u.parts.scheme, **m))
    f('getHost', Overload('url_get_host', [URLType], S, url_host, **m))
    f('getHostname', Overload('url_get_hostname', [URLType], S, url_hostname, **m))
    f('getPort', Overload('url_get_port', [URLType], S, url_port, **m))
    f('getEscapedPath', Overload('url_get_escaped_path', [URLType], S, lambda u: u.parts.path, **m))
    f('getQuery', Overload('url_get_query', [URLType], celtypes.map_of(S, celtypes.list_of(S)), url_query, **m))
    f('isURL', Overload('is_url_string', [S], B, is_url))
    declare_ips(env)


def declare_ips(env: Env) -> None:
    f = env.add_function
    m = {'member': True}
    f('ip', Overload('string_to_ip', [S], IPType, ip), Overload('cidr_ip', [CIDRType], IPType, ip, **m))
    f('family', Overload('ip_family', [IPType], INT, lambda a: a.addr.version, **m))
    f('ip.isCanonical', Overload('ip_is_canonical', [S], B, is_canonical))
    for name, overload, attr in (('isUnspecified', 'ip_is_unspecified', 'is_unspecified'),
                                 ('isLoopback', 'ip_is_loopback', 'is_loopback'),
                                 ('isLinkLocalMulticast', 'ip_is_link_local_multicast', ''),
                                 ('isLinkLocalUnicast', 'ip_is_link_local_unicast', 'is_link_local'),
                                 ('isGlobalUnicast', 'ip_is_global_unicast', '')):
        f(name, Overload(overload, [IPType], B, ip_predicate(name, attr), **m))
    f('isIP', Overload('is_ip', [S], B, is_ip))
    f('string', Overload('ip_to_string', [IPType], S, ip_text), Overload('cidr_to_string', [CIDRType], S, ip_text))
    f('cidr', Overload('string_to_cidr', [S], CIDRType, cidr))
    f('containsIP', Overload('cidr_contains_ip_string', [CIDRType, S], B, contains_ip, **m),
      Overload('cidr_contains_ip_ip', [CIDRType, IPType], B, contains_ip, **m))
    f('containsCIDR', Overload('cidr_contains_cidr_string', [CIDRType, S], B, contains_cidr, **m),
      Overload('cidr_contains_cidr', [CIDRType, CIDRType], B, contains_cidr, **m))
    f('prefixLength', Overload('cidr_prefix_length', [CIDRType], INT, lambda c: c.prefix, **m))
    f('masked', Overload('cidr_masked', [CIDRType], CIDRType, masked, **m))
    f('isCIDR', Overload('is_cidr', [S], B, is_cidr))


def ip_predicate(name: str, attr: str) -> Any:
    def predicate(a: IP) -> bool:
        addr = a.addr
        if name == 'isLinkLocalMulticast':
            net = '224.0.0.0/24' if addr.version == 4 else 'ff02::/16'
            return addr in ipaddress.ip_network(net)
        if name == 'isGlobalUnicast':
            if addr.version == 4 and addr == ipaddress.IPv4Address('255.255.255.255'):
                return False
            return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local)
        return bool(getattr(addr, attr))
    return predicate
