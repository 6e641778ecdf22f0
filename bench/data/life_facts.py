"""Fact kinds about the user's own life: home, pets, habits, travel, hobbies (see facts.py)."""

from __future__ import annotations

import vocabulary as V
from facts import Ctx, Fact, Question, Turn


def own_dog(c: Ctx) -> Fact:
    breed = c.take(V.DOG_BREEDS)
    name = c.take(V.PET_NAMES)
    return Fact(
        slots={"pet": name},
        episodes=[
            [
                c.say(
                    c.pick(
                        [
                            f"We did it, we got a {breed} puppy! We're calling her {name}.",
                            f"Meet {name}, our new {breed}! She's eight weeks old.",
                        ]
                    ),
                    "a",
                ),
                c.ack("Congratulations! Puppies are a lot of work but so worth it."),
            ],
            [
                c.say(
                    f"{name} graduated from puppy school today, top of the class for 'sit', "
                    "bottom of the class for 'stay'.",
                    "b",
                ),
                c.ack("Ha, classic."),
            ],
        ],
        distractors=[
            [
                c.say("The puppy kept us up all night whining in her crate."),
                c.ack("The first weeks are rough. A ticking clock near the crate can help."),
            ],
            [c.say(f"{name} chewed through another phone charger."), c.ack("Oh no, not again.")],
        ],
        questions=[
            Question(
                c.pick(
                    [
                        "What breed of dog do I have?",
                        "What kind of pup did we get?",
                        "Which dog breed did we bring home?",
                    ]
                ),
                "semantic",
                ["a"],
                breed,
            ),
            Question(f"What breed is {name}?", "lexical", ["a"], breed),
            Question(
                c.pick(
                    [
                        "How did my dog do in obedience training?",
                        "How did our pup get on at training class?",
                    ]
                ),
                "semantic",
                ["b"],
                "good at sit, bad at stay",
            ),
        ],
    )


def drink_changes(c: Ctx) -> Fact:
    chain = c.take(V.DRINK_CHAINS)
    why = c.pick(V.DRINK_SWITCH_REASONS)
    (d1, k1), (d2, k2), (d3, _) = chain
    return Fact(
        slots={"drink": k2},
        episodes=[
            [c.say(f"My morning ritual is {d1} from the cafe by the station.", "a"), c.ack()],
            [c.say(f"I switched from {k1} to {d2}, {why}.", "b"), c.ack("Makes sense.")],
            [
                c.say(
                    f"New phase: I've stopped the {k2} and it's just {d3} in the mornings now.", "c"
                ),
                c.ack("How's the adjustment going?"),
            ],
        ],
        distractors=[
            [
                c.say("Ugh, the cafe by the station was closed today, total chaos."),
                c.ack("Mornings without the usual routine are rough."),
            ]
        ],
        questions=[
            Question(
                c.pick(
                    [
                        "What do I drink in the morning these days?",
                        "What's my current morning drink?",
                    ]
                ),
                "update",
                ["c"],
                d3,
            ),
            Question(f"Why did I give up {k1}?", "lexical", ["b"], why),
            Question(
                "How has my morning beverage changed over time?",
                "multi_hop",
                ["a", "b", "c"],
                f"{d1} -> {d2} -> {d3}",
            ),
        ],
    )


def trip(c: Ctx) -> Fact:
    city, country = c.take(V.CITIES)
    month = c.pick(V.MONTHS)
    hotel = c.take(V.HOTELS)
    best, best_sem = c.take(V.HIKES)
    return Fact(
        slots={"city": city},
        episodes=[
            [
                c.say(f"We booked {city} for {month}! Staying at {hotel}.", "a"),
                c.ack(f"{city} is a wonderful choice."),
            ],
            [
                c.say(f"Back home. Honestly the best part of {city} was {best}.", "b"),
                c.ack("Welcome back! Sounds like a great trip."),
            ],
        ],
        distractors=[
            [
                c.say(f"Can you give me a packing list for {city}? I always forget adapters."),
                Turn(
                    "assistant",
                    "Sure: passport, plug adapter, a light rain jacket, comfortable "
                    "walking shoes, a reusable bottle, and copies of your bookings.",
                ),
            ],
            [c.say(f"Flights to {city} got rescheduled by two hours, annoying but fine."), c.ack()],
        ],
        questions=[
            Question(f"Where am I staying in {city}?", "lexical", ["a"], hotel),
            Question(
                f"Where did I book accommodation for my trip to {country}?",
                "semantic",
                ["a"],
                hotel,
            ),
            Question(
                f"What was the highlight of my holiday in {country}?", "semantic", ["b"], best_sem
            ),
        ],
    )


def favourite_restaurant(c: Ctx) -> Fact:
    cuisine, name, dish = c.take(V.RESTAURANTS)
    return Fact(
        slots={"restaurant": name},
        episodes=[
            [
                c.say(
                    f"My go-to dinner spot lately is {name}, the little {cuisine} place, "
                    f"their {dish} is unreal.",
                    "a",
                ),
                c.ack("Now I'm hungry."),
            ]
        ],
        distractors=[
            [
                c.say(f"Tried to get into {name} tonight but there was a huge queue."),
                c.ack("Worth booking ahead next time."),
            ]
        ],
        questions=[
            Question(f"What kind of food does {name} serve?", "lexical", ["a"], cuisine),
            Question(
                c.pick(
                    [
                        "Which restaurant do I keep going back to for dinner?",
                        "Where do I like to eat out most these days?",
                    ]
                ),
                "semantic",
                ["a"],
                name,
            ),
        ],
    )


def allergy(c: Ctx) -> Fact:
    what, group, how = c.take(V.ALLERGIES)
    return Fact(
        slots={"food": what},
        episodes=[
            [
                c.say(
                    f"Turns out I'm allergic to {what}. Found out the hard way after {how}.", "a"
                ),
                c.ack("That sounds scary, I'm glad you're okay."),
            ]
        ],
        distractors=[
            [
                c.say("Allergist appointment got moved again, third time."),
                c.ack("Frustrating. Hopefully it sticks this time."),
            ]
        ],
        questions=[
            Question(f"Do I have a {group} allergy?", "semantic", ["a"], what),
            Question(
                c.pick(
                    [
                        "What did I react badly to, and when did I find out?",
                        "How did I discover my allergy?",
                    ]
                ),
                "semantic",
                ["a"],
                how,
            ),
        ],
    )


def lessons(c: Ctx) -> Fact:
    inst, family = c.take(V.INSTRUMENTS)
    teacher = f"{c.pick(V.TEACHER_TITLES)} {c.take(V.TEACHER_SURNAMES)}"
    return Fact(
        slots={"instrument": inst},
        episodes=[
            [
                c.say(
                    f"I signed up for {inst} lessons, my teacher is {teacher}, very strict "
                    "but funny.",
                    "a",
                ),
                c.ack("Learning an instrument as an adult is great."),
            ]
        ],
        distractors=[
            [
                c.say(f"Practised {inst} for an hour and my neighbours hate me."),
                c.ack("Maybe a practice mute would help."),
            ]
        ],
        questions=[
            Question(f"Who teaches my {inst} lessons?", "lexical", ["a"], teacher),
            Question(f"Which {family} have I started learning?", "semantic", ["a"], inst),
        ],
    )


def language(c: Ctx) -> Fact:
    lang, how = c.take(V.LANGUAGES)
    days = c.rng.randint(40, 300)
    return Fact(
        slots={"language": lang},
        episodes=[
            [
                c.say(f"I'm learning {lang} with {how}, {days} days in a row so far.", "a"),
                c.ack("That's a serious streak."),
            ]
        ],
        distractors=[
            [
                c.say("Missed my language practice last night, fell asleep on the sofa."),
                c.ack("One missed night is fine."),
            ]
        ],
        questions=[
            Question(
                c.pick(
                    [
                        "Which foreign language am I studying?",
                        "What language have I been practising every day?",
                    ]
                ),
                "semantic",
                ["a"],
                lang,
            ),
            Question(f"How am I learning {lang}?", "lexical", ["a"], how),
        ],
    )


def car_change(c: Ctx) -> Fact:
    old, new = c.take(V.CARS)
    return Fact(
        slots={"car": old.split()[-1]},
        episodes=[
            [
                c.say(f"My {old} is making that rattling noise again.", "a"),
                c.ack("Might be a heat shield, worth a mechanic's look."),
            ],
            [
                c.say(f"Traded in the {old.split()[-1]} for a used {new}. Bye old friend.", "b"),
                c.ack("Exciting! Enjoy the new ride."),
            ],
        ],
        distractors=[[c.say("Parking near the office is impossible this week."), c.ack()]],
        questions=[
            Question(
                c.pick(["What car do I drive now?", "What vehicle do I own at the moment?"]),
                "update",
                ["b"],
                new,
            ),
            Question(f"What did I trade my {old} for?", "lexical", ["b"], new),
        ],
    )


def race(c: Ctx) -> Fact:
    (r1, t1), (r2, t2) = sorted(c.rng.sample(V.RACES, 2), key=V.RACES.index)
    return Fact(
        slots={"race": r1},
        episodes=[
            [c.say(f"Ran my first {r1} this morning, {t1}!", "a"), c.ack("Amazing!")],
            [
                c.say(f"Finished the {r2} in {t2}. Legs are destroyed.", "b"),
                c.ack("That's a massive achievement."),
            ],
        ],
        distractors=[
            [
                c.say("Shin splints are back, skipping the run club this week."),
                c.ack("Rest is training too."),
            ]
        ],
        questions=[
            Question(f"What was my time in the {r1}?", "lexical", ["a"], t1),
            Question(
                c.pick(
                    [
                        "What's the longest race I've completed?",
                        "What is the longest distance I've run in an event?",
                    ]
                ),
                "update",
                ["b"],
                r2,
            ),
        ],
    )


def book(c: Ctx) -> Fact:
    title, author = c.take(V.BOOKS)
    return Fact(
        slots={"author": author},
        episodes=[
            [
                c.say(
                    c.pick(
                        [
                            f"Currently reading {title} by {author}. Slow start but gorgeous.",
                            f"Started {title} ({author}) on the train, can't put it down.",
                        ]
                    ),
                    "a",
                ),
                c.ack(),
            ]
        ],
        distractors=[
            [
                c.say("Book club picked something I can't stand, again."),
                c.ack("You could always skim it."),
            ]
        ],
        questions=[
            Question(f"Which {author} novel am I reading?", "lexical", ["a"], title),
            Question(
                c.pick(
                    [
                        "What have I been reading lately?",
                        "Which novel is on my nightstand?",
                        "What book am I in the middle of?",
                    ]
                ),
                "semantic",
                ["a"],
                title,
            ),
        ],
    )


def appointment(c: Ctx) -> Fact:
    who, why = c.take(V.APPOINTMENTS)
    d1, d2 = c.rng.sample(V.WEEKDAYS, 2)
    return Fact(
        slots={"clinic": who},
        episodes=[
            [c.say(f"{who.capitalize()} appointment on {d1} for {why}.", "a"), c.ack()],
            [c.say(f"The {who} moved me to {d2} at 3pm instead.", "b"), c.ack("Noted.")],
        ],
        distractors=[[c.say("I hate phoning clinics, the hold music is cursed."), c.ack()]],
        questions=[Question(f"When is my {who} appointment now?", "update", ["b"], f"{d2} 3pm")],
    )


def moved_home(c: Ctx) -> Fact:
    hood = c.take(V.NEIGHBOURHOODS)
    return Fact(
        slots={"hood": hood},
        episodes=[
            [
                c.say(f"We signed the lease on a two-bedroom in {hood}, moving on the 1st.", "a"),
                c.ack("Congrats on the new place!"),
            ]
        ],
        distractors=[
            [
                c.say("Packing boxes everywhere, I can't find a single spoon."),
                c.ack("Moving chaos is real."),
            ]
        ],
        questions=[
            Question(
                c.pick(
                    [
                        "Which neighbourhood is our new flat in?",
                        "Where is the apartment we're renting now?",
                    ]
                ),
                "semantic",
                ["a"],
                hood,
            )
        ],
    )
