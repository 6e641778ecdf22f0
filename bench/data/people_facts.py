"""Fact kinds about the people in the user's life and work (see facts.py)."""

from __future__ import annotations

import vocabulary as V
from facts import Ctx, Fact, Question


def person_pet(c: Ctx) -> Fact:
    p = c.person(c.pick(["coworker", "friend", "sister", "neighbour"]))
    kind = c.pick(list(V.PETS))
    said_kind, asked_kind = V.PETS[kind]
    pet = c.take(V.PET_NAMES)
    word = c.pick(said_kind)
    state = c.pick(
        [
            f"{c.said(p)} finally adopted the {word} {p.she} kept talking about, "
            f"{p.she} named it {pet}.",
            f"{c.said(p)} has a new {word}! It's called {pet} and apparently it already "
            "rules the flat.",
            f"{c.said(p)} sent me photos of {p.her} new {word}, {pet}. Unreasonably cute.",
        ]
    )
    return Fact(
        slots={"person": p.name, "animal": word},
        episodes=[[c.say(state, "a"), c.ack(f"How is {p.name} finding life with a pet?")]],
        distractors=[
            [
                c.say(
                    f"{p.name}'s {word} walked across {p.her} keyboard during our video call, "
                    "we were all crying laughing."
                ),
                c.ack(),
            ],
            [
                c.say(f"{p.name} is away this weekend so I might help with feeding the {word}."),
                c.ack("That's kind of you."),
            ],
        ],
        questions=[
            Question(f"What is the name of {p.name}'s {kind}?", "lexical", ["a"], pet),
            Question(
                f"What did my {c.asked(p)} call {p.her} new {c.pick(asked_kind)}?",
                "semantic",
                ["a"],
                pet,
            ),
        ],
    )


def person_moved(c: Ctx) -> Fact:
    p = c.person(c.pick(["sister", "brother", "friend", "cousin"]))
    city, country = c.take(V.CITIES)
    prof, _does, field_ = c.take(V.PROFESSIONS)
    state = f"{c.said(p)} is moving to {city} next month, {p.she} got a job there as a {prof}."
    return Fact(
        slots={"person": p.name, "city": city},
        episodes=[[c.say(state, "a"), c.ack(f"Big move! Will you visit {p.name}?")]],
        distractors=[
            [c.say(f"Long phone call with {p.name} tonight, mostly about nothing."), c.ack()],
            [
                c.say(f"{p.name} keeps sending me apartment listings, the rents are wild."),
                c.ack("Flat hunting is exhausting."),
            ],
        ],
        questions=[
            Question(f"Which city is {p.name} relocating to?", "lexical", ["a"], city),
            Question(
                f"Which country will my {c.asked(p)} be living in?", "semantic", ["a"], country
            ),
            Question(
                f"What kind of work does my {c.asked(p)} do in {field_}?", "semantic", ["a"], prof
            ),
        ],
    )


def work_project(c: Ctx) -> Fact:
    code = c.take(V.PROJECT_CODENAMES)
    goal, _area, topic = c.take(V.PROJECT_GOALS)
    m1, m2 = c.rng.sample(V.MONTHS, 2)
    mate = c.person("coworker")
    return Fact(
        slots={"project": code, "person": mate.name},
        episodes=[
            [
                c.say(f"At work I'm now leading Project {code}, which is {goal}.", "a"),
                c.ack("Congrats on leading it! That's a meaty project."),
            ],
            [
                c.say(
                    f"Bad news on {code}: the deadline slipped from {m1} to {m2}, vendor delays.",
                    "b",
                ),
                c.ack("Slips happen. At least it's out in the open now."),
            ],
        ],
        distractors=[
            [
                c.say(f"{code} standup ran long again, forty minutes on naming things."),
                c.ack("Naming is genuinely one of the hard problems."),
            ],
            [
                c.say(f"Had a long design review for {code} with {mate.name}, my brain is fried."),
                c.ack("Take a proper break tonight."),
            ],
        ],
        questions=[
            Question(f"What is Project {code} about?", "lexical", ["a"], goal),
            Question(f"Which project at work involves {topic}?", "semantic", ["a"], code),
            Question(f"When is the {code} deadline now?", "update", ["b"], m2),
            Question(
                "Why was the launch date of my work project pushed back?",
                "semantic",
                ["b"],
                "vendor delays",
            ),
        ],
    )


def birthday_gift(c: Ctx) -> Fact:
    p = c.person(c.pick(["coworker", "friend", "manager", "sister", "brother"]))
    gift, _kind = c.take(V.GIFTS)
    day = c.rng.randint(2, 28)
    return Fact(
        slots={"person": p.name},
        episodes=[
            [
                c.say(f"{p.name}'s birthday is on the {day}th, I'm getting {p.him} {gift}.", "a"),
                c.ack("What a thoughtful present."),
            ]
        ],
        distractors=[
            [
                c.say(f"{p.name} was in a foul mood all day, no idea why."),
                c.ack("Maybe just a rough day."),
            ]
        ],
        questions=[
            Question(f"What present am I giving {p.name}?", "lexical", ["a"], gift),
            Question(f"When is {p.name}'s birthday?", "lexical", ["a"], f"the {day}th"),
        ],
    )


def person_job(c: Ctx) -> Fact:
    p = c.person(c.pick(["neighbour", "cousin", "friend"]))
    prof, does, _field = c.take(V.PROFESSIONS)
    kid = c.take(V.FEMALE_NAMES + V.MALE_NAMES)
    return Fact(
        slots={"person": p.name},
        episodes=[
            [c.say(f"Found out {c.said(p)} is a {prof}, {p.she} {does}.", "a"), c.ack()],
            [
                c.say(
                    f"{p.name}'s kid {kid} starts school next week, {p.name} is more "
                    "nervous than the kid.",
                    "b",
                ),
                c.ack("First days are a big deal."),
            ],
        ],
        distractors=[
            [c.say(f"Bumped into {p.name} at the supermarket, we talked for ages."), c.ack()]
        ],
        questions=[
            Question(f"What does {p.name} do for a living?", "lexical", ["a"], prof),
            Question(f"What is the job of {kid}'s parent?", "multi_hop", ["a", "b"], prof),
            Question(f"What's the name of my {c.asked(p)}'s child?", "multi_hop", ["a", "b"], kid),
        ],
    )


def new_job(c: Ctx) -> Fact:
    company = c.take(V.COMPANIES)
    role = c.take(V.ROLES_AT_WORK)
    month = c.pick(V.MONTHS)
    boss = c.person("manager")
    return Fact(
        slots={"company": company, "person": boss.name},
        episodes=[
            [
                c.say(
                    f"I accepted the offer from {company}! Starting as a {role} in {month}.", "a"
                ),
                c.ack("Huge congratulations!"),
            ],
            [
                c.say(
                    f"Told {c.said(boss)} I'm leaving. {boss.she.capitalize()} took it "
                    "better than I expected.",
                    "b",
                ),
                c.ack("That's a relief."),
            ],
        ],
        distractors=[
            [
                c.say(f"Third interview at {company} today, panel of five people."),
                c.ack("Fingers crossed!"),
            ]
        ],
        questions=[
            Question(f"What position will I have at {company}?", "lexical", ["a"], role),
            Question(
                "Which employer am I moving to, and when do I start?",
                "semantic",
                ["a"],
                f"{company}, {month}",
            ),
            Question(
                f"How did my {c.asked(boss)} react to my resignation?",
                "semantic",
                ["b"],
                "better than expected",
            ),
        ],
    )
