import itertools

import pytest

from kopf._api import apierrors


def status(code: int, message: str = 'msg', **details: object) -> dict[str, object]:
    return {'kind': 'Status', 'apiVersion': 'v1', 'status': 'Failure', 'message': message,
            'reason': 'Some', 'code': code, 'details': details}


@pytest.mark.parametrize('code, cls', [
    (400, apierrors.APIClientError),
    (401, apierrors.APIUnauthorizedError),
    (403, apierrors.APIForbiddenError),
    (404, apierrors.APINotFoundError),
    (409, apierrors.APIConflictError),
    (410, apierrors.APIClientError),
    (422, apierrors.APIUnprocessableEntityError),
    (429, apierrors.APITooManyRequestsError),
    (500, apierrors.APIServerError),
    (503, apierrors.APIServerError),
])
def test_mapping_by_status(code: int, cls: type[apierrors.APIError]) -> None:
    error = apierrors.map_error(code, status(code, 'the text'))
    assert type(error) is cls
    assert isinstance(error, apierrors.APIError)
    assert error.status == code
    assert error.code == code
    assert error.message == 'the text'
    assert 'the text' in str(error)


def test_client_and_server_branches() -> None:
    assert issubclass(apierrors.APINotFoundError, apierrors.APIClientError)
    assert not issubclass(apierrors.APIServerError, apierrors.APIClientError)


def test_untrusted_body_is_not_the_payload() -> None:
    error = apierrors.map_error(500, {'message': 'not a status'})
    assert error.payload is None
    assert error.message is None


def test_plain_text_429_with_header() -> None:
    error = apierrors.map_error(429, 'Too many requests, please try again later.\n', retry_after_header='3')
    assert isinstance(error, apierrors.APITooManyRequestsError)
    assert error.retry_after == 3.0
    assert error.message == 'Too many requests, please try again later.'


def test_retry_after_from_status_details() -> None:
    error = apierrors.map_error(429, status(429, retryAfterSeconds=7))
    assert error.retry_after == 7.0


def test_header_wins_over_details() -> None:
    error = apierrors.map_error(429, status(429, retryAfterSeconds=7), retry_after_header='2')
    assert error.retry_after == 2.0


@pytest.mark.parametrize('error, retriable', [
    (apierrors.map_error(500), True),
    (apierrors.map_error(503), True),
    (apierrors.map_error(429), True),
    (apierrors.map_error(403), True),
    (apierrors.map_error(400), False),
    (apierrors.map_error(401), False),
    (apierrors.map_error(404), False),
    (apierrors.map_error(409), False),
    (apierrors.map_error(422), False),
    (ConnectionResetError(), True),
    (TimeoutError(), True),
    (ValueError(), False),
])
def test_retriable(error: BaseException, retriable: bool) -> None:
    assert apierrors.is_retriable(error) is retriable


@pytest.mark.parametrize('backoffs, expected', [
    (None, []),
    ([], []),
    (5, [5.0]),
    (0.5, [0.5]),
    ((1, 2), [1.0, 2.0]),
    ([3], [3.0]),
])
def test_backoffs(backoffs: apierrors.Backoffs, expected: list[float]) -> None:
    assert list(apierrors.iter_backoffs(backoffs)) == expected


def test_infinite_backoffs() -> None:
    backoffs = apierrors.iter_backoffs(itertools.repeat(1))
    assert list(itertools.islice(backoffs, 100)) == [1.0] * 100


@pytest.mark.parametrize('backoffs, expected', [
    (None, [1.0, 1.0, 1.0]),
    ([], [1.0, 1.0, 1.0]),
    (5, [5.0, 5.0, 5.0]),
    ((1, 2, 60), [1.0, 2.0, 60.0, 60.0, 60.0]),
    (itertools.repeat(3), [3.0, 3.0, 3.0]),
])
def test_endless_backoffs_repeat_the_last_one(backoffs: apierrors.Backoffs, expected: list[float]) -> None:
    assert list(itertools.islice(apierrors.endless_backoffs(backoffs), len(expected))) == expected


def test_endless_backoffs_default_when_there_are_none() -> None:
    assert list(itertools.islice(apierrors.endless_backoffs(None, default=7), 2)) == [7.0, 7.0]


def test_decide_plain_retry() -> None:
    assert apierrors.decide_retry(apierrors.map_error(500), 3.0) == apierrors.RetryDecision(True, 3.0)


def test_decide_exhausted() -> None:
    assert apierrors.decide_retry(apierrors.map_error(500), None) == apierrors.RetryDecision(False)


def test_decide_final_error() -> None:
    assert apierrors.decide_retry(apierrors.map_error(404), 3.0) == apierrors.RetryDecision(False)


def test_decide_retry_after_longer_than_backoff() -> None:
    error = apierrors.map_error(429, retry_after_header='10')
    assert apierrors.decide_retry(error, 1.0) == apierrors.RetryDecision(True, 10.0)


def test_decide_backoff_longer_than_retry_after() -> None:
    error = apierrors.map_error(429, retry_after_header='2')
    assert apierrors.decide_retry(error, 5.0) == apierrors.RetryDecision(True, 5.0)


def test_decide_enforced_retry_after() -> None:
    error = apierrors.map_error(429, retry_after_header='2')
    assert apierrors.decide_retry(error, 5.0, enforce_retry_after=True) == apierrors.RetryDecision(True, 2.0)


def test_decide_enforced_without_retry_after_uses_backoff() -> None:
    error = apierrors.map_error(503)
    assert apierrors.decide_retry(error, 5.0, enforce_retry_after=True) == apierrors.RetryDecision(True, 5.0)
