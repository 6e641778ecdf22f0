"""The fact kinds in a fixed order (the generator samples from this list, so order matters)."""

from __future__ import annotations

from collections.abc import Callable

from facts import Ctx, Fact
from life_facts import (
    allergy,
    appointment,
    book,
    car_change,
    drink_changes,
    favourite_restaurant,
    language,
    lessons,
    moved_home,
    own_dog,
    race,
    trip,
)
from people_facts import (
    birthday_gift,
    new_job,
    person_job,
    person_moved,
    person_pet,
    work_project,
)

FACT_KINDS: list[Callable[[Ctx], Fact]] = [
    person_pet,
    person_moved,
    own_dog,
    work_project,
    drink_changes,
    trip,
    favourite_restaurant,
    allergy,
    lessons,
    language,
    car_change,
    birthday_gift,
    person_job,
    new_job,
    race,
    book,
    appointment,
    moved_home,
]
