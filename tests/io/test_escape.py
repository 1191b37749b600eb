"""annokit.io.escape: the vectorised formula neutralisation equals the per-cell rule."""

import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.io.escape import FORMULA_PREFIXES, neutralise_formulas, neutralise_text


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


cells = st.one_of(st.text(alphabet=st.sampled_from(list("=+-@\t\rab1 '")), max_size=4),
                  st.integers(-5, 5), st.none())


@settings(max_examples=100, deadline=None)
@given(st.lists(cells, min_size=1, max_size=30), st.lists(st.text(max_size=3), min_size=1,
                                                          max_size=5))
def test_neutralise_formulas_equals_neutralise_text_cell_by_cell(column, categories):
    df = pd.DataFrame({"=x": column,
                       "cat": pd.Categorical([categories[i % len(categories)]
                                              for i in range(len(column))])})
    out = neutralise_formulas(df)
    assert list(out.columns) == ["'=x", "cat"]
    expected = [neutralise_text(v) for v in df["=x"].astype(object)]  # cells as pandas holds them
    got = out["'=x"].astype(object).tolist()
    assert [None if _missing(v) else v for v in got] == [None if _missing(v) else v
                                                          for v in expected]
    assert out["cat"].tolist() == [neutralise_text(v) for v in df["cat"].astype(object)]
    for v in out["'=x"]:
        assert not (isinstance(v, str) and v.startswith(FORMULA_PREFIXES))
