"""copy_value makes the copy copy.deepcopy makes: the same values, the same sharing, the same failures."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dnsse.frameworks.ray.refs import ObjectRef
from dnsse.frameworks.ray.serialization import copy_value


class Point:
    def __init__(self, x: int) -> None:
        self.x = x
        self.seen: list = []


def _shape(value: object, ids: dict[int, int]) -> object:
    """``value`` with every object replaced by the order in which it was first met: equal shapes share alike."""
    if id(value) in ids:
        return ("again", ids[id(value)])
    if isinstance(value, (int, str, float, type(None), bytes)):
        return value
    ids[id(value)] = len(ids)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_shape(item, ids) for item in value])
    if isinstance(value, dict):
        return (type(value).__name__, [(_shape(k, ids), _shape(v, ids)) for k, v in value.items()])
    if isinstance(value, Point):
        return ("Point", _shape(value.x, ids), _shape(value.seen, ids))
    return (type(value).__name__, id(value))


def _same_copy(value: object) -> None:
    ours, theirs = copy_value(value), copy.deepcopy(value)
    assert _shape(ours, {}) == _shape(theirs, {})
    assert (ours is value) == (theirs is value)


atoms = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.booleans(), st.floats(allow_nan=False))
nested = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), inner, max_size=3),
        inner.map(Point),
    ),
    max_leaves=12,
)


@given(nested)
def test_a_nested_value_copies_as_deepcopy_copies_it(value: object) -> None:
    _same_copy(value)


def test_an_object_twice_in_a_value_is_one_object_twice_in_the_copy() -> None:
    shared = [1, 2]
    point = Point(3)
    value = ([shared, shared], {"a": shared, "p": point}, (point, shared))
    copied = copy_value(value)
    assert copied[0][0] is copied[0][1] is copied[1]["a"] is copied[2][1]
    assert copied[1]["p"] is copied[2][0]
    assert copied[0][0] is not shared and copied[2][0] is not point
    _same_copy(value)


def test_a_list_that_holds_itself_through_a_tuple_copies_as_deepcopy_copies_it() -> None:
    cycle: list = []
    cycle.append((cycle, 1))
    copied = copy_value(cycle)
    assert copied[0][0] is copied and copied is not cycle
    _same_copy(cycle)


def test_a_tuple_of_atoms_and_refs_is_its_own_copy_and_a_list_is_not() -> None:
    ref = ObjectRef(1, "test")
    value = (1, "a", ref, None)
    assert copy_value(value) is value
    assert copy_value([ref])[0] is ref
    mapping = OrderedDict(a=[1])
    copied = copy_value(mapping)
    assert type(copied) is OrderedDict and copied == mapping and copied["a"] is not mapping["a"]


def test_a_value_that_cannot_be_copied_fails_as_it_fails_to_pickle() -> None:
    with pytest.raises(TypeError, match="Could not serialize list for Ray.*pickle"):
        copy_value([1, {"lock": threading.Lock()}])
