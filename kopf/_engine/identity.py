"""This process's identity in peerings, Leases and the `User-Agent`: gathered from the environment.

Light on imports: every operator needs it at start, also a standalone one that never loads the
peering machinery (the password database is read only when no user variable is set: `pwd` directly, as
`getpass.getuser()` does, without `getpass` and the `termios` it loads).
"""
import datetime
import os
import socket
import string

_USER_VARIABLES = ('LOGNAME', 'USER', 'LNAME', 'USERNAME')  # the ones `getpass.getuser()` reads, in its order


def make_identity() -> str:
    """`$POD_ID`, else `user@host/<timestamp>/<3 random lowercase letters>`."""
    suffix = ''.join(string.ascii_lowercase[byte % 26] for byte in os.urandom(3))
    return format_identity(pod_id=os.environ.get('POD_ID'), user=user(), host=socket.gethostname(),
                           now=datetime.datetime.now(datetime.UTC), suffix=suffix)


def format_identity(*, pod_id: str | None, user: str, host: str, now: datetime.datetime, suffix: str) -> str:
    """As upstream formats it: `$POD_ID` if set, else `user@host/<YYYYmmddHHMMSS>/<suffix>`."""
    if pod_id:
        return pod_id
    return f'{user}@{host}/{now.astimezone(datetime.UTC).strftime("%Y%m%d%H%M%S")}/{suffix}'


def freezer_identity() -> str:
    """The default identity of `kopf freeze` / `kopf resume`: `user@host`."""
    return f'{user()}@{socket.gethostname()}'


def user() -> str:
    for name in _USER_VARIABLES:
        if value := os.environ.get(name):
            return value
    try:
        import pwd  # lazily, and not via getpass (it loads termios too): the same lookup as getpass.getuser()'s
        return pwd.getpwuid(os.getuid()).pw_name
    except Exception:  # no user name in this environment (e.g. a container without a passwd entry)
        return 'unknown'
