"""Everyday chatter around a fact's entities: turns that name the same person, place or thing
but answer none of the questions, as people keep coming back to the same topics in real chats.

Every template here was checked to carry no answer: it never states a pet's name or breed, a
city someone moves to, a deadline, a current choice, and so on.
"""

from __future__ import annotations

import random

TEMPLATES: dict[str, list[tuple[str, str]]] = {
    "person": [
        (
            "Had lunch with {person} today, we mostly complained about the weather.",
            "Sometimes a good complain is exactly what you need.",
        ),
        (
            "{person} recommended a podcast about shipwrecks, weirdly gripping.",
            "Ooh, what's it called?",
        ),
        ("{person} says hi, by the way.", "Hi back!"),
        ("I owe {person} a phone call, I keep forgetting.", "Maybe set a reminder for tonight?"),
        (
            "{person} and I argued about pineapple on pizza for twenty minutes.",
            "A timeless debate.",
        ),
        (
            "Should I invite {person} to the barbecue? It might be awkward.",
            "If you'd enjoy having them there, invite them. Awkward usually fades fast.",
        ),
    ],
    "animal": [
        (
            "Do you know why a {animal} would suddenly stop eating?",
            "Stress, dental pain or illness are common causes. If it lasts over a day, call a vet.",
        ),
        ("Saw the funniest {animal} video, I've watched it ten times.", "Send it over!"),
    ],
    "pet": [
        (
            "{pet} hates the vet with a passion, took two of us to get her in the carrier.",
            "Treats and a towel over the carrier can help next time.",
        ),
        ("{pet} stole a whole croissant off the table this morning.", "Ha, bold move."),
        (
            "Thinking of getting {pet} a second bed for the living room.",
            "Spoiled, in the best way.",
        ),
    ],
    "city": [
        (
            "What should I eat if I'm ever in {city}?",
            "Look for the local markets first, then ask people where they eat, not where tourists "
            "go. Street food is usually the best value.",
        ),
        (
            "Watched a documentary about {city} last night, looks beautiful.",
            "It really is a special place.",
        ),
        (
            "Is {city} expensive, do you think?",
            "It depends on the season and the neighbourhood; accommodation is usually the "
            "biggest cost.",
        ),
    ],
    "project": [
        ("{project} retro today, surprisingly honest.", "Good retros are rare, nice."),
        (
            "Someone asked me to explain {project} to the new hires, I over-prepared as usual.",
            "Over-prepared beats under-prepared.",
        ),
        ("The {project} channel on Slack is pure chaos right now.", "Maybe pin a summary message?"),
    ],
    "drink": [
        ("Honestly I miss {drink} sometimes.", "Old habits!"),
        (
            "Read an article about {drink} being bad for you, or good, I can't keep up.",
            "Nutrition headlines flip every week.",
        ),
    ],
    "restaurant": [
        (
            "{restaurant} has a new menu apparently, not sure how I feel.",
            "Change can be good, or it can be tragic.",
        ),
        ("Should I take my parents to {restaurant}?", "If they like trying new things, sure."),
    ],
    "food": [
        (
            "Do restaurants have to list {food} on menus?",
            "Rules vary by country, but in many places major allergens must be declared. Always "
            "ask the staff too.",
        ),
    ],
    "instrument": [
        (
            "How often should an adult beginner practise {instrument}?",
            "Short daily sessions beat long weekly ones: 20 to 30 minutes, focused.",
        ),
        (
            "My {instrument} needs new strings or something, it sounds off.",
            "Could be tuning or worn strings; a teacher can check in a minute.",
        ),
    ],
    "language": [
        (
            "Is {language} grammar hard for English speakers?",
            "Some parts are, but vocabulary and listening practice carry you a long way.",
        ),
        (
            "Watched a film in {language} without subtitles and understood maybe a third.",
            "A third is great progress!",
        ),
    ],
    "car": [
        ("Insurance renewal for the {car} came in, ouch.", "Worth shopping around."),
        ("Washed the {car} for the first time in months.", "A rare event, congratulations."),
    ],
    "company": [
        (
            "Read some reviews of {company} on Glassdoor, mixed bag.",
            "Reviews skew negative; ask people who work there if you can.",
        ),
        ("{company} sent a huge onboarding pack, so much paperwork.", "The joys of HR."),
    ],
    "race": [
        (
            "Any tips for pacing a {race}?",
            "Start slower than feels right, settle in, and only push in the last third.",
        ),
    ],
    "author": [
        (
            "Do you think {author} is overrated?",
            "Tastes differ; some readers love the style, others find it slow.",
        ),
    ],
    "clinic": [
        ("Why are {clinic} waiting rooms always freezing?", "A mystery of modern medicine."),
    ],
    "hood": [
        (
            "Is {hood} a good area for cycling?",
            "Check the local bike lane map; some neighbourhoods are much friendlier than others.",
        ),
    ],
}


def around(rng: random.Random, slots: dict[str, str], n: int) -> list[list[tuple[str, str]]]:
    """Up to ``n`` distractor exchanges (user, assistant) about the fact's entities."""
    options = [(key, pair) for key in slots for pair in TEMPLATES.get(key, [])]
    chosen = rng.sample(options, min(n, len(options)))
    return [[("user", u.format(**{k: slots[k]})), ("assistant", a)] for k, (u, a) in chosen]
