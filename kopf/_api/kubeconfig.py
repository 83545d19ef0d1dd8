"""Reading kubeconfig files into `ConnectionInfo`, as kubectl does.

Rules (kubectl's):
- `$KUBECONFIG` is a list of paths (os.pathsep); missing files are skipped; the files are merged:
  the first file that defines a cluster/user/context name wins for that name, and the first file
  that sets `current-context` wins. Without `$KUBECONFIG`: `~/.kube/config`.
- Relative file references (CA, client certificate/key, token file, exec command with a slash)
  are relative to the directory of the file that defined them.
- `*-data` fields are base64 of PEM. `token` wins over `tokenFile`; an exec plugin's or an
  auth-provider's token is used when there is no static token.
- Anything malformed is one `LoginError` naming the file and the field.

The files are read by a small reader of the plain block-style YAML that kubectl and most tools write
(`_read_plain_yaml`), which refuses anything else (flow collections, anchors, tags, multi-line or
escaped scalars, scalars that YAML 1.1 would read as numbers, dates, yes/no...); PyYAML reads those.
So an operator with a kubeconfig does not import PyYAML at every start.
"""
import dataclasses
import datetime
import json
import os
import pathlib
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from kopf._api import apierrors, credentials

DEFAULT_PATH = '~/.kube/config'


@dataclasses.dataclass(frozen=True)
class _Entry:
    """A named stanza (cluster, user, context) and the file that defined it."""

    value: Mapping[str, Any]
    path: pathlib.Path
    field: str  # e.g. `users[2].user`, for error messages


@dataclasses.dataclass
class MergedConfig:
    clusters: dict[str, _Entry] = dataclasses.field(default_factory=dict)
    users: dict[str, _Entry] = dataclasses.field(default_factory=dict)
    contexts: dict[str, _Entry] = dataclasses.field(default_factory=dict)
    current_context: str | None = None
    current_context_path: pathlib.Path | None = None
    paths: list[pathlib.Path] = dataclasses.field(default_factory=list)


def config_paths(environ: Mapping[str, str] | None = None) -> list[pathlib.Path]:
    """The kubeconfig files to read, in order of precedence (only those that exist)."""
    environ = os.environ if environ is None else environ
    value = environ.get('KUBECONFIG')
    candidates = value.split(os.pathsep) if value else [DEFAULT_PATH]
    paths = [pathlib.Path(item).expanduser() for item in candidates if item.strip()]
    return [path for path in paths if path.is_file()]


def missing(environ: Mapping[str, str] | None = None) -> str | None:
    """What is wrong when `$KUBECONFIG` is set but none of its files exists (kubectl fails then too), else None."""
    environ = os.environ if environ is None else environ
    value = environ.get('KUBECONFIG')
    if not value or config_paths(environ):
        return None
    return f'KUBECONFIG={value}: no such file' if os.pathsep not in value else f'KUBECONFIG={value}: no such files'


def _undefined(path: pathlib.Path, what: str) -> apierrors.LoginError:
    return apierrors.LoginError(f'{what} is not defined in {path}')


def _fail(path: pathlib.Path, field: str, problem: str) -> apierrors.LoginError:
    return apierrors.LoginError(f'Malformed kubeconfig {str(path)!r} at {field!r}: {problem}')


def read_config(paths: Sequence[pathlib.Path]) -> MergedConfig:
    """Merge the kubeconfig files per kubectl's rules (the first definition of a name wins)."""
    merged = MergedConfig(paths=list(paths))
    for path in paths:
        try:
            text = path.read_text()
        except OSError as exc:
            raise _fail(path, '<file>', f'cannot be read as YAML: {exc}') from exc
        doc = _parse(path, text) or {}
        if not isinstance(doc, Mapping):
            raise _fail(path, '<file>', 'the document is not a mapping')
        for section, key, target in [('clusters', 'cluster', merged.clusters),
                                     ('users', 'user', merged.users),
                                     ('contexts', 'context', merged.contexts)]:
            items = doc.get(section) or []
            if not isinstance(items, list):
                raise _fail(path, section, 'must be a list')
            for index, item in enumerate(items):
                field = f'{section}[{index}]'
                if not isinstance(item, Mapping) or not isinstance(item.get('name'), str):
                    raise _fail(path, f'{field}.name', 'every entry needs a string name')
                value = item.get(key) or {}
                if not isinstance(value, Mapping):
                    raise _fail(path, f'{field}.{key}', 'must be a mapping')
                target.setdefault(item['name'], _Entry(value, path, f'{field}.{key}'))
        current = doc.get('current-context')
        if current and merged.current_context is None:
            if not isinstance(current, str):
                raise _fail(path, 'current-context', 'must be a string')
            merged.current_context = current
            merged.current_context_path = path
    return merged


def _parse(path: pathlib.Path, text: str) -> Any:
    try:
        return _read_plain_yaml(text)
    except _NotPlain:
        pass
    import yaml  # only for what the plain reader refuses
    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: e.g. a timestamp with month 13
        raise _fail(path, '<file>', f'cannot be read as YAML: {exc}') from exc


class _NotPlain(Exception):
    """The text is not (only) the plain block YAML that `_read_plain_yaml` reads: PyYAML must read it."""


_INT = re.compile(r'0|[1-9][0-9]*')
_NOT_PLAIN_CHARS = re.compile(r'[^\n\x20-\x7e]')
_CONSTANTS: dict[str, Any] = {'null': None, 'Null': None, 'NULL': None, '~': None,
                              'true': True, 'True': True, 'TRUE': True, 'false': False, 'False': False,
                              'FALSE': False, '{}': {}, '[]': []}
_NOT_PLAIN_START = set('<=~!&*|>%@`#,?:[]{}\'"')  # YAML's indicators, merge keys, values
_NUMERIC_START = set('-+.0123456789')
# Wider than what PyYAML reads as ints (incl. 0b/0x/octal/sexagesimal), floats and timestamps: refused.
_NUMBER_LIKE = re.compile(r'[-+]?(?:0b[0-9_]*|0x[0-9a-fA-F_]*|[0-9_:]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?'
                          r'|\.(?:inf|Inf|INF|nan|NaN|NAN))|[0-9]{4}-[0-9].*')
_YAML11_WORDS = {'y', 'Y', 'n', 'N', 'yes', 'Yes', 'YES', 'no', 'No', 'NO', 'on', 'On', 'ON', 'off', 'Off', 'OFF'}


def _read_plain_yaml(text: str) -> Any:
    """The document as PyYAML's `safe_load` reads it, for the plain block YAML of kubeconfigs only.

    Block mappings and sequences (the items of a key's sequence may stand at the key's indentation),
    plain scalars that are strings, non-negative integers, true/false/null, single- or double-quoted
    one-line scalars without escapes, `{}` and `[]`, comment lines. Anything else raises `_NotPlain`.
    """
    if _NOT_PLAIN_CHARS.search(text):
        raise _NotPlain()  # tabs, CRs, control characters, non-ASCII: PyYAML's rules
    lines: list[tuple[int, str]] = []
    for raw in text.split('\n'):
        content = raw.strip(' ')
        if content and not content.startswith('#'):
            if content.startswith(('---', '...', '%')):
                raise _NotPlain()
            lines.append((len(raw) - len(raw.lstrip(' ')), content))
    if not lines:
        return None
    if lines[0][0] != 0:
        raise _NotPlain()
    value, end = _plain_block(lines, 0, 0)
    if end != len(lines):
        raise _NotPlain()
    return value


def _plain_block(lines: list[tuple[int, str]], index: int, indent: int) -> tuple[Any, int]:
    """A mapping or a sequence whose lines start at `indent`; returns it and the index of the line after it."""
    if lines[index][1] == '-' or lines[index][1].startswith('- '):
        return _plain_sequence(lines, index, indent)
    return _plain_mapping(lines, index, indent)


def _plain_mapping(lines: list[tuple[int, str]], index: int, indent: int) -> tuple[dict[str, Any], int]:
    mapping: dict[str, Any] = {}
    while index < len(lines) and lines[index][0] == indent:
        content = lines[index][1]
        key, colon, rest = content.partition(': ')
        if not colon:
            if not content.endswith(':'):
                raise _NotPlain()
            key, rest = content[:-1], ''
        key, rest = key.rstrip(' '), rest.strip(' ')
        if not isinstance(parsed_key := _plain_scalar(key), str) or not parsed_key or key[0] in '\'"':
            raise _NotPlain()
        index += 1
        nested = index < len(lines) and (lines[index][0] > indent or (
            lines[index][0] == indent and (lines[index][1] == '-' or lines[index][1].startswith('- '))))
        if rest:
            if nested:
                raise _NotPlain()  # a multi-line scalar, or a mapping where YAML refuses one
            mapping[parsed_key] = _plain_scalar(rest)
        elif nested:
            mapping[parsed_key], index = _plain_block(lines, index, lines[index][0])
        else:
            mapping[parsed_key] = None
    if index < len(lines) and lines[index][0] > indent:
        raise _NotPlain()
    return mapping, index


def _plain_sequence(lines: list[tuple[int, str]], index: int, indent: int) -> tuple[list[Any], int]:
    sequence: list[Any] = []
    while index < len(lines) and lines[index][0] == indent and lines[index][1].startswith('- '):
        content = lines[index][1][2:]
        item = content.lstrip(' ')
        column = indent + 2 + len(content) - len(item)
        if item[0] not in '\'"' and (': ' in item or item.endswith(':')):  # an item that is a mapping
            lines[index] = (column, item)
            value, index = _plain_mapping(lines, index, column)
        else:
            value, index = _plain_scalar(item), index + 1
            if index < len(lines) and lines[index][0] > indent:
                raise _NotPlain()
        sequence.append(value)
    if index < len(lines) and (lines[index][0] > indent or lines[index][1] == '-'):
        raise _NotPlain()
    return sequence, index


def _plain_scalar(text: str) -> Any:
    if not text:
        raise _NotPlain()
    if text in _CONSTANTS:
        value = _CONSTANTS[text]
        return type(value)() if isinstance(value, (dict, list)) else value
    if len(text) >= 2 and text[0] == text[-1] == "'" and "'" not in text[1:-1].replace("''", ''):
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"' and not {'"', '\\'} & set(text[1:-1]):
        return text[1:-1]
    if _INT.fullmatch(text):
        return int(text)
    if text[0] in _NUMERIC_START and (_NUMBER_LIKE.fullmatch(text) or text == '-' or text.startswith('- ')):
        raise _NotPlain()  # not e.g. `--region`, `10.0.0.1`, `5f4dcc3b`: strings for PyYAML too
    if text[0] in _NOT_PLAIN_START or text in _YAML11_WORDS or text[-1] == ':' or ': ' in text or ' #' in text:
        raise _NotPlain()
    return text


def load(paths: Sequence[pathlib.Path], *, context: str | None = None,
         environ: Mapping[str, str] | None = None) -> credentials.ConnectionInfo:
    """The credentials of the (current) context of the merged kubeconfig files."""
    merged = read_config(paths)
    first = paths[0] if paths else pathlib.Path(DEFAULT_PATH)
    name = context or merged.current_context
    if not name:
        raise _fail(first, 'current-context', 'no current context is set (and none was requested)')
    if name not in merged.contexts:
        raise _undefined(merged.current_context_path or first, f'context {name!r}')
    ctx = merged.contexts[name]
    cluster_name = ctx.value.get('cluster')
    if not isinstance(cluster_name, str) or cluster_name not in merged.clusters:
        raise _undefined(ctx.path, f'cluster {cluster_name!r} (of context {name!r})')
    cluster = merged.clusters[cluster_name]
    user_name = ctx.value.get('user')
    user = merged.users.get(user_name) if isinstance(user_name, str) else None
    if user_name and user is None:
        raise _undefined(ctx.path, f'user {user_name!r} (of context {name!r})')
    namespace = ctx.value.get('namespace')
    if namespace is not None and not isinstance(namespace, str):
        raise _fail(ctx.path, f'{ctx.field}.namespace', 'must be a string')
    return _connection_info(cluster, user, namespace, environ)


def uses_auth_provider(paths: Sequence[pathlib.Path], *, context: str | None = None) -> bool:
    """Whether the user of the (current) context has a legacy `auth-provider` plugin (gcp, oidc, azure):
    the `kubernetes` client can refresh its tokens, this module only reads the static ones."""
    merged = read_config(paths)
    ctx = merged.contexts.get(context or merged.current_context or '')
    user_name = ctx.value.get('user') if ctx is not None else None
    user = merged.users.get(user_name) if isinstance(user_name, str) else None
    return user is not None and user.value.get('auth-provider') is not None


def _str(entry: _Entry, key: str) -> str | None:
    value = entry.value.get(key)
    if value is None or value == '':
        return None
    if not isinstance(value, str):
        raise _fail(entry.path, f'{entry.field}.{key}', 'must be a string')
    return value


def _file(entry: _Entry, key: str) -> str | None:
    value = _str(entry, key)
    if value is None:
        return None
    path = pathlib.Path(value).expanduser()
    path = path if path.is_absolute() else entry.path.parent / path
    if not path.is_file():
        raise _fail(entry.path, f'{entry.field}.{key}', f'file {str(path)!r} does not exist')
    return str(path)


def _data(entry: _Entry, key: str) -> bytes | None:
    value = _str(entry, key)
    if value is None:
        return None
    try:
        return credentials.decode_pem(value)
    except ValueError as exc:
        raise _fail(entry.path, f'{entry.field}.{key}', f'not valid base64: {exc}') from exc


def _connection_info(cluster: _Entry, user: _Entry | None, namespace: str | None,
                     environ: Mapping[str, str] | None) -> credentials.ConnectionInfo:
    server = _str(cluster, 'server')
    if not server:
        raise _fail(cluster.path, f'{cluster.field}.server', 'the server URL is missing')
    insecure = cluster.value.get('insecure-skip-tls-verify')
    if insecure is not None and not isinstance(insecure, bool):
        raise _fail(cluster.path, f'{cluster.field}.insecure-skip-tls-verify', 'must be a boolean')
    ca_data = _data(cluster, 'certificate-authority-data')
    ca_path = None if ca_data is not None else _file(cluster, 'certificate-authority')
    fields: dict[str, Any] = {}
    if user is not None:
        fields = _user_fields(user, cluster, environ)
    return credentials.ConnectionInfo(
        server=server,
        ca_path=ca_path,
        ca_data=ca_data,
        insecure=insecure,
        proxy_url=_str(cluster, 'proxy-url'),
        default_namespace=namespace,
        **fields,
    )


def _user_fields(user: _Entry, cluster: _Entry, environ: Mapping[str, str] | None) -> dict[str, Any]:
    fields: dict[str, Any] = {
        'username': _str(user, 'username'),
        'password': _str(user, 'password'),
        'certificate_data': _data(user, 'client-certificate-data'),
        'private_key_data': _data(user, 'client-key-data'),
    }
    if fields['certificate_data'] is None:
        fields['certificate_path'] = _file(user, 'client-certificate')
    if fields['private_key_data'] is None:
        fields['private_key_path'] = _file(user, 'client-key')
    token = _str(user, 'token')
    if token is None and (token_file := _file(user, 'tokenFile')) is not None:
        token = pathlib.Path(token_file).read_text().strip()
    provider = user.value.get('auth-provider')
    if token is None and provider is not None:
        config = provider.get('config') if isinstance(provider, Mapping) else None
        if not isinstance(config, Mapping):
            raise _fail(user.path, f'{user.field}.auth-provider.config', 'must be a mapping')
        token = config.get('access-token') or config.get('id-token') or None
    if token is None and user.value.get('exec') is not None:
        exec_fields = run_exec_plugin(user, cluster, environ)
        token = exec_fields.pop('token', None)
        for key, value in exec_fields.items():
            if value is not None:
                fields[key] = value
                if key.endswith('_data'):
                    fields.pop(key.replace('_data', '_path'), None)
    fields['token'] = token
    return fields


def run_exec_plugin(user: _Entry, cluster: _Entry, environ: Mapping[str, str] | None) -> dict[str, Any]:
    """Run a client-go credential plugin and parse its ExecCredential (token, client cert/key, expiration)."""
    field = f'{user.field}.exec'
    command, args, env = _exec_command(user, cluster, environ)
    try:
        proc = subprocess.run([command, *args], env=env, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _fail(user.path, f'{field}.command', f'the credential plugin {command!r} failed to run: {exc}') from exc
    if proc.returncode != 0:
        raise _fail(user.path, f'{field}.command',
                    f'the credential plugin {command!r} exited with {proc.returncode}: {proc.stderr.strip()}')
    try:
        status = json.loads(proc.stdout)['status']
        if not isinstance(status, Mapping):
            raise TypeError('status is not a mapping')
    except (ValueError, KeyError, TypeError) as exc:
        raise _fail(user.path, f'{field}.command',
                    f'the credential plugin {command!r} printed no valid ExecCredential: {exc}') from exc
    return _exec_credential(user, status)


def _exec_command(user: _Entry, cluster: _Entry,
                  environ: Mapping[str, str] | None) -> tuple[str, list[str], dict[str, str]]:
    """The plugin's command, its args and its environment (with `KUBERNETES_EXEC_INFO`), as client-go runs it."""
    field = f'{user.field}.exec'
    spec = user.value['exec']
    if not isinstance(spec, Mapping) or not isinstance(spec.get('command'), str) or not spec['command']:
        raise _fail(user.path, f'{field}.command', 'a command (string) is required')
    command = spec['command']
    if os.sep in command and not os.path.isabs(command):
        command = str(user.path.parent / command)
    args = spec.get('args') or []
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise _fail(user.path, f'{field}.args', 'must be a list of strings')
    env = dict(os.environ if environ is None else environ)
    for index, item in enumerate(spec.get('env') or []):
        if not isinstance(item, Mapping) or not isinstance(item.get('name'), str):
            raise _fail(user.path, f'{field}.env[{index}]', 'needs a name and a value')
        env[item['name']] = str(item.get('value', ''))
    api_version = spec.get('apiVersion') or 'client.authentication.k8s.io/v1'
    info: dict[str, Any] = {'apiVersion': api_version, 'kind': 'ExecCredential',
                            'spec': {'interactive': False}}
    if spec.get('provideClusterInfo'):
        info['spec']['cluster'] = {'server': cluster.value.get('server'),
                                   'certificate-authority-data': cluster.value.get('certificate-authority-data')}
    env['KUBERNETES_EXEC_INFO'] = json.dumps(info)
    return command, args, env


def _exec_credential(user: _Entry, status: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an ExecCredential's `status`: the token, the client certificate and key, the expiration."""
    field = f'{user.field}.exec'
    expiration: datetime.datetime | None = None
    if status.get('expirationTimestamp'):
        try:
            expiration = datetime.datetime.fromisoformat(str(status['expirationTimestamp']))  # RFC 3339
        except ValueError as exc:
            raise _fail(user.path, f'{field}.command', f'bad expirationTimestamp: {exc}') from exc
        if expiration.tzinfo is None:
            expiration = expiration.replace(tzinfo=datetime.UTC)
    cert = status.get('clientCertificateData')
    key = status.get('clientKeyData')
    return {
        'token': status.get('token') or None,
        'certificate_data': cert.encode() if isinstance(cert, str) else None,
        'private_key_data': key.encode() if isinstance(key, str) else None,
        'expiration': expiration,
    }
