"""Hard silver negatives: the right evidence with a value a reader skims past."""

import random

from pipeline.checkers.extraction.silver import near_miss, span_states

SPAN = "Hearing date: 12 March 2019. Member: Paul GAGNON. File TB7-04153"
NAMES = [
    {"first_name": "Paul", "last_name": "Gagnon"},
    {"first_name": "Diane", "last_name": "Tremblay"},
    {"first_name": "Marc", "last_name": "Roy"},
]


def draws(value, n=40):
    rng = random.Random(0)
    return [near_miss(value, SPAN, NAMES, rng) for _ in range(n)]


def test_a_name_keeps_one_part_and_borrows_the_other_from_elsewhere():
    paul = {"first_name": "Paul", "last_name": "Gagnon"}
    misses = draws(paul)
    assert {"first_name", "last_name"} == {
        part for m in misses for part in m if m[part] != paul[part]
    }
    # Exactly one part changes, and never to a word the span states.
    for m in misses:
        changed = [part for part in m if m[part] != paul[part]]
        assert len(changed) == 1
        assert m[changed[0]] in {"Diane", "Marc", "Tremblay", "Roy"}


def test_a_number_is_one_digit_off():
    for miss in draws("TB7-04153"):
        assert len(miss) == len("TB7-04153")
        assert sum(a != b for a, b in zip(miss, "TB7-04153", strict=True)) == 1
        assert miss.replace("-", "")[:2] == "TB"


def test_a_date_moves_but_stays_a_date():
    march12 = {"yyyy": "2019", "mm": "03", "dd": "12"}
    misses = draws(march12)
    assert march12 not in misses
    assert all(not span_states(SPAN, m) for m in misses)


def test_no_near_miss_for_a_plain_word_or_a_lone_name():
    assert set(draws("Toronto")) == {None}
    lone = {"first_name": "Paul", "last_name": "Gagnon"}
    rng = random.Random(0)
    assert near_miss(lone, SPAN, [lone], rng) is None


def test_a_span_states_a_date_only_when_the_date_itself_is_there():
    assert span_states(SPAN, {"yyyy": "2019", "mm": "03", "dd": "12"})
    # Same year, another day: the year alone does not state it.
    assert not span_states(SPAN, {"yyyy": "2019", "mm": "03", "dd": "13"})
    assert span_states(SPAN, "Gagnon") and not span_states(SPAN, "Tremblay")
