"""The identity of an operator in peerings, Leases and its `User-Agent`, as upstream formats it (pure)."""
import datetime


def make_identity(*, pod_id: str | None, user: str, host: str, now: datetime.datetime, suffix: str) -> str:
    """`$POD_ID` if set, else `user@host/<YYYYmmddHHMMSS>/<suffix>` (suffix: 3 random characters)."""
    if pod_id:
        return pod_id
    return f'{user}@{host}/{now.astimezone(datetime.UTC).strftime("%Y%m%d%H%M%S")}/{suffix}'
