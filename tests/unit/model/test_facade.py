"""The model facade: a sorted __all__ that lists exactly its public names."""

import dra_operator.model as model


def test_all_is_sorted() -> None:
    assert model.__all__ == sorted(model.__all__)


def test_all_matches_the_public_names() -> None:
    public = {name for name in vars(model) if not name.startswith("_")}
    assert set(model.__all__) == public
