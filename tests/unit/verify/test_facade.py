"""The verify facade lists exactly its public names (ruff's RUF022 keeps the order)."""

import dra_operator.verify as verify


def test_all_matches_the_public_names() -> None:
    public = {name for name in vars(verify) if not name.startswith("_")}
    assert set(verify.__all__) == public
