"""A @dnsse.test test that asks for a pytest fixture: refused when the module is collected, with what to do."""

import dnsse


@dnsse.test(framework="threads", budget=5)
def test_wants_a_fixture(tmp_path):
    (tmp_path / "x").write_text("x")
