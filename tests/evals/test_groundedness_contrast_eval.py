"""The contrast-margin table of evals/groundedness_contrast.py, from scored claims without a model."""

from evals.groundedness_contrast import Scored, table


def test_table_counts_kept_and_caught_claims_per_margin() -> None:
    scored = [
        Scored("SUPPORT", True, 0.3),
        Scored("SUPPORT", True, -0.08),
        Scored("SUPPORT", True, None),  # the check abstained: the model's yes stands
        Scored("SUPPORT", False, None),
        Scored("CONTRADICT", True, -0.3),
        Scored("CONTRADICT", True, -0.02),
        Scored("CONTRADICT", False, None),
    ]
    rows = table(scored, [0.0, 0.1]).splitlines()
    assert rows[0] == (
        "claims: 4 supported, 3 contradicted; accepted by the model: 3 supported, 2 contradicted"
    )
    assert rows[4] == "| 0.0 | 2/3 | 2/2 | 0.500 | 1.000 |"
    assert rows[5] == "| 0.1 | 3/3 | 1/2 | 0.750 | 0.667 |"
