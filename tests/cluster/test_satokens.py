"""ServiceAccount tokens: claims, signing, and what makes them invalid."""
from kopf._cluster.rbac import satokens

KEY = b'k' * 32


def test_issued_tokens_are_checked_and_name_the_service_account() -> None:
    claims = satokens.claims('ns', 'op', 'u-1', satokens.AUDIENCES, 1000, 3600)
    token = satokens.issue(KEY, claims)
    assert satokens.claims_of(KEY, token, 1000) == claims
    user = satokens.user_of(claims)
    assert (user.name, user.groups, user.uid) == ('system:serviceaccount:ns:op', (
        'system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'), 'u-1')
    assert dict(user.extra)['authentication.kubernetes.io/credential-id'] == (f'JTI={claims["jti"]}',)
    assert satokens.referenced(claims) == [('serviceaccounts', 'ns', 'op', 'u-1')]


def test_invalid_tokens() -> None:
    token = satokens.issue(KEY, satokens.claims('ns', 'op', 'u', satokens.AUDIENCES, 1000, 3600))
    assert satokens.claims_of(b'other' * 8, token, 1000) is None                       # another key
    assert satokens.claims_of(KEY, token, 1000 + 3600 + 61) is None                    # expired
    assert satokens.claims_of(KEY, token + 'x', 1000) is None                          # tampered
    assert satokens.claims_of(KEY, 'a.b', 1000) is None
    foreign = satokens.issue(KEY, satokens.claims('ns', 'op', 'u', ['vault'], 1000, 3600))
    assert satokens.claims_of(KEY, foreign, 1000) is None                              # not our audience


def test_bound_objects_are_referenced_and_shown() -> None:
    claims = satokens.claims('ns', 'op', 'u', satokens.AUDIENCES, 0, 600, {'kind': 'Pod', 'name': 'p', 'uid': 'pu'})
    assert satokens.referenced(claims)[1] == ('pods', 'ns', 'p', 'pu')
    assert dict(satokens.user_of(claims).extra)['authentication.kubernetes.io/pod-name'] == ('p',)
