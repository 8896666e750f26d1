"""The hooks facade: a sorted __all__ that lists exactly its public names."""

import dra_operator.hooks as hooks


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name


def test_all_is_sorted() -> None:
    assert hooks.__all__ == sorted(hooks.__all__, key=_isort_key)


def test_all_matches_the_public_names() -> None:
    public = {name for name in vars(hooks) if not name.startswith("_")}
    assert set(hooks.__all__) == public
