import pytest

from kopf._core.budgets import (
    ANNOTATIONS_BUDGET,
    AnnotationsBudgetError,
    annotations_after,
    check_annotations,
    size_of,
)


def test_size_counts_utf8_keys_and_values() -> None:
    assert size_of({'a': 'bc', 'é': 'ü'}) == 3 + 4
    assert ANNOTATIONS_BUDGET == 262144


def test_annotations_after_a_merge_patch() -> None:
    body = {'metadata': {'annotations': {'a': '1', 'b': '2'}}}
    patch = {'metadata': {'annotations': {'a': None, 'c': '3'}}}
    assert annotations_after(body, patch) == {'b': '2', 'c': '3'}


@pytest.mark.parametrize('existing, written, ok', [
    (0, 100, True),
    (ANNOTATIONS_BUDGET - 200, 100, True),
    (ANNOTATIONS_BUDGET - 50, 100, False),
])
def test_check_annotations(existing: int, written: int, ok: bool) -> None:
    body = {'metadata': {'name': 'n', 'namespace': 'ns', 'annotations': {'big': 'x' * existing}}}
    patch = {'metadata': {'annotations': {'kopf.zalando.org/create_fn': 'y' * written, 'small': 'z'}}}
    if ok:
        assert check_annotations(body, patch) == size_of(annotations_after(body, patch))
    else:
        with pytest.raises(AnnotationsBudgetError, match=r"ns/n.*'kopf.zalando.org/create_fn'") as e:
            check_annotations(body, patch)
        assert e.value.key == 'kopf.zalando.org/create_fn'
        assert e.value.size > e.value.limit


def test_a_patch_that_shrinks_is_fine_even_if_over() -> None:
    body = {'metadata': {'annotations': {'big': 'x' * ANNOTATIONS_BUDGET}}}
    assert check_annotations(body, {'metadata': {'annotations': {'big': None}}}) == 0
