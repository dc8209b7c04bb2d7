"""The one registry idiom (:mod:`opsdk._registry`): the conflict rule and the undo."""

import pytest

from opsdk._registry import Conflict, Registry, Unknown
from opsdk.errors import OpsdkError


@pytest.fixture
def things():
    return Registry[str, object]("thing", "give it a name of its own")


def test_the_same_value_again_is_a_no_op_and_a_different_one_a_conflict_naming_the_fix(things):
    value = ("a", 1)
    things.add("a", value)
    again = things.add("a", ("a", 1))  # equal: a module imported twice
    again.undo()  # undoes nothing: the first registration owns the entry
    assert things.get("a") is value
    with pytest.raises(Conflict) as raised:
        things.add("a", ("a", 2))
    assert str(raised.value) == (
        "thing 'a' is registered already with a different value: give it a name of its own"
    )
    assert isinstance(raised.value, OpsdkError) and raised.value.exit_code == 2


def test_undo_removes_the_entry_once_and_leaves_a_later_one_alone(things):
    first = things.add("a", 1)
    things.add("b", 2)
    first.undo()
    assert things.keys() == ["b"]
    later = things.add("a", 3)
    first.undo()  # a second undo is a no-op, not the removal of the later entry
    assert things.items() == [("b", 2), ("a", 3)]
    with later:
        pass
    assert "a" not in things and len(things) == 1


def test_replace_takes_a_key_whatever_it_held_and_its_undo_puts_the_old_value_back(things):
    things.add("a", 1)
    with things.replace("a", 2):
        assert things.get("a") == 2
    assert things.get("a") == 1
    with things.replace("new", 3):
        assert things.values() == [1, 3]
    assert list(things) == ["a"]


def test_a_required_key_that_is_missing_is_one_line_naming_the_known_ones(things):
    things.add("a", 1)
    assert things.get("zz") is None
    with pytest.raises(Unknown, match=r"^no thing 'zz'; the known ones: a$"):
        things.require("zz")
    with pytest.raises(LookupError, match="the known ones: A, B$"):
        things.require("zz", known=lambda: ["A", "B"])


def test_the_offline_ge_kernels_and_the_usage_contexts_refuse_a_second_value():
    """Both overwrote silently before: the executor judged with whichever kernel was
    imported last."""
    from opsdk.harness.variants import contexts
    from opsdk.offline.ge.kernels import _registry as kernels

    with pytest.raises(Conflict, match="^reference kernel of GE op type 'Add' is registered"):
        kernels.register("Add")(lambda node, inputs: inputs)
    with pytest.raises(Conflict, match="^usage context 'chain' is registered already"):
        contexts._register(contexts.Context("chain", "another"))
    assert contexts.get("chain").name == "chain"
    with pytest.raises(Unknown, match="^no usage context 'nope'; the known ones: view, chain"):
        contexts.get("nope")
