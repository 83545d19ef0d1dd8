"""The identity's format, as upstream's (pure)."""
import datetime

import pytest

from kopf._engine import identities

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


@pytest.mark.parametrize('pod_id, expected', [
    ('pod-abc', 'pod-abc'),
    (None, 'me@host/20260102030405/xyz'),
    ('', 'me@host/20260102030405/xyz'),
])
def test_identity(pod_id: str | None, expected: str) -> None:
    assert identities.make_identity(pod_id=pod_id, user='me', host='host', now=NOW, suffix='xyz') == expected
