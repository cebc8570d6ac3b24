"""The specification language: operators, precedence, field tests, and errors that point."""

from __future__ import annotations

import pytest

from dnsse.errors import BadInput
from dnsse.spec.builtins import EngineChecked, ReplicasEqual
from dnsse.spec.parser import SpecSyntaxError, parse
from dnsse.spec.sources import load_suite, parse_property, read_spec_file, specs_in_target
from dnsse.spec.syntax import Atom, Binary, Const, Unary

a, b, c = Atom("a"), Atom("b"), Atom("c")


@pytest.mark.parametrize("op", ["!", "X", "F", "G", "Y", "O", "H"])
def test_every_unary_operator_parses(op):
    assert parse(f"{op} a") == Unary(op, a)


@pytest.mark.parametrize("op", ["&", "|", "->", "<->", "U", "R", "W", "S"])
def test_every_binary_operator_parses(op):
    assert parse(f"a {op} b") == Binary(op, a, b)


def test_constants_and_parentheses():
    assert parse("(true) & !(false)") == Binary("&", Const(True), Unary("!", Const(False)))


@pytest.mark.parametrize(
    "text, expected",
    [
        # Loosest first: <->, ->, |, &, then U R W S, then the unary operators.
        ("a | b & c", Binary("|", a, Binary("&", b, c))),
        ("a & b | c", Binary("|", Binary("&", a, b), c)),
        ("a -> b | c", Binary("->", a, Binary("|", b, c))),
        ("a <-> b -> c", Binary("<->", a, Binary("->", b, c))),
        ("a & b U c", Binary("&", a, Binary("U", b, c))),
        ("!a U b", Binary("U", Unary("!", a), b)),
        ("G a -> F b", Binary("->", Unary("G", a), Unary("F", b))),
        ("X a & b", Binary("&", Unary("X", a), b)),
        ("G F a", Unary("G", Unary("F", a))),
        # -> and the binary temporal operators group to the right, the others to the left.
        ("a -> b -> c", Binary("->", a, Binary("->", b, c))),
        ("a U b U c", Binary("U", a, Binary("U", b, c))),
        ("a S b S c", Binary("S", a, Binary("S", b, c))),
        ("a & b & c", Binary("&", Binary("&", a, b), c)),
        ("a <-> b <-> c", Binary("<->", Binary("<->", a, b), c)),
    ],
)
def test_precedence_and_associativity_follow_common_ltl_tools(text, expected):
    assert parse(text) == expected


def test_double_symbol_spellings_of_and_and_or():
    assert parse("a && b || c") == parse("a & b | c")


def test_atoms_are_dotted_event_names_with_field_tests():
    assert parse("collective.issue(op=all_reduce, rank=0, ok=true, tag=\"x y\", lr=0.5, d=-1)") == Atom(
        "collective.issue", (("op", "all_reduce"), ("rank", 0), ("ok", True), ("tag", "x y"), ("lr", 0.5), ("d", -1))
    )


def test_operator_letters_inside_names_are_names():
    assert parse("Fetch U Go") == Binary("U", Atom("Fetch"), Atom("Go"))


def test_a_formula_prints_with_only_the_parentheses_it_needs():
    assert str(parse("((G (req -> (F ack)))) & (a U (b U c))")) == "G (req -> F ack) & a U b U c"


def _error(text: str) -> SpecSyntaxError:
    with pytest.raises(SpecSyntaxError) as caught:
        parse(text)
    return caught.value


def test_a_syntax_error_shows_the_formula_with_a_caret_under_the_bad_token():
    message = str(_error("G (req -> & ack)"))
    assert "unexpected '&'" in message
    assert "  G (req -> & ack)\n" + " " * (2 + len("G (req -> ")) + "^" in message


def test_a_formula_that_ends_too_early_points_at_its_end():
    message = str(_error("G (req ->"))
    assert "ends too early" in message
    assert "  G (req ->\n           ^" in message


def test_an_unknown_character_is_pointed_at():
    assert "  a # b\n    ^" in str(_error("a # b"))


def test_an_empty_formula_is_an_error():
    assert "the formula is empty" in str(_error("  "))


def test_past_operators_over_future_formulas_are_refused_with_a_caret():
    error = _error("G (b -> O F a)")
    assert "past operator O" in str(error)
    assert error.position == 8


def test_syntax_errors_are_bad_input():
    assert isinstance(_error(")"), BadInput)


def test_builtins_parse_with_their_arguments():
    assert isinstance(parse_property("builtin:deadlock_free"), EngineChecked)
    replicas = parse_property("builtin:replicas_equal(after=step_done, field=checksum, key=step)")
    assert replicas == ReplicasEqual(
        "builtin:replicas_equal(after=step_done, field=checksum, key=step)", "step_done", "checksum", "step"
    )


def test_unknown_builtins_and_arguments_say_what_exists():
    with pytest.raises(BadInput, match="the built-ins are builtin:deadlock_free"):
        parse_property("builtin:fast")
    with pytest.raises(BadInput, match=r"takes after=\.\.\., field=\.\.\., \[key=\.\.\.\]"):
        parse_property("builtin:replicas_equal(after=x)")


def test_a_builtin_syntax_error_points_into_the_whole_text():
    with pytest.raises(SpecSyntaxError) as caught:
        parse_property("builtin:replicas_equal(after=)")
    assert caught.value.position == len("builtin:replicas_equal(after=")


def test_spec_files_hold_one_formula_a_line_with_comments(tmp_path):
    path = tmp_path / "props.ltl"
    path.write_text("# safety\nG !bad\n\n  G (req -> F ack)  \n")
    assert read_spec_file(path) == [(f"{path}:2", "G !bad"), (f"{path}:4", "G (req -> F ack)")]


def test_an_error_in_a_spec_file_names_the_file_and_line(tmp_path):
    path = tmp_path / "props.ltl"
    path.write_text("G !bad\nG (a ->\n")
    with pytest.raises(BadInput, match=f"{path}:2: the spec does not parse"):
        load_suite([], [path])


def test_a_target_declares_its_specs_in_a_module_level_list(tmp_path):
    target = tmp_path / "t.py"
    target.write_text('import dnsse\nDNSSE_SPECS = ["G !bad", "F done"]\ndef main():\n    pass\n')
    assert specs_in_target(target) == ["G !bad", "F done"]
    suite = load_suite(["G !bad"], [], target)
    assert suite is not None and suite.texts == ["G !bad", "F done"]


def test_a_declared_spec_list_must_be_literal_strings(tmp_path):
    target = tmp_path / "t.py"
    target.write_text("X = 'G a'\nDNSSE_SPECS = [X]\n")
    with pytest.raises(BadInput, match="must be a list of string literals"):
        specs_in_target(target)


def test_no_specs_give_no_suite():
    assert load_suite([], []) is None
