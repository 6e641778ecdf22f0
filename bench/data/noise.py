"""Turns that answer no question: greetings, small talk and everyday requests to the assistant.

They make up most of a session, as in real chat logs, and give every system plenty of
plausible but useless text to rank below the answering turns.
"""

from __future__ import annotations

import random

GREETINGS = [
    ("Hey, morning!", "Good morning! What's on your mind today?"),
    ("Hi again.", "Hi! Good to hear from you. How's your day going?"),
    ("Evening. Long day.", "Sounds like it. Want to talk it through or just unwind?"),
    ("Hello hello", "Hello! What can I do for you?"),
    ("Hey, got a minute?", "Always. What's up?"),
    ("Morning. Coffee hasn't kicked in yet.", "Ha, take your time. I'm here when you're ready."),
    ("Back again with random questions", "Ask away!"),
]
CLOSINGS = [
    ("Thanks, that's all for now.", "Anytime! Talk soon."),
    ("Okay, heading off. Bye!", "Bye! Have a good one."),
    ("Cheers, super helpful.", "Glad it helped!"),
    ("Right, back to work.", "Good luck with the rest of the day!"),
    ("Gonna sleep, night.", "Good night, sleep well."),
]
WEATHER = [
    "pouring rain",
    "weirdly warm",
    "freezing",
    "so windy the bins blew over",
    "foggy all day",
    "gorgeous and sunny",
]
SHOWS = [
    "a Danish crime drama",
    "a baking competition",
    "a documentary about octopuses",
    "an old sitcom",
    "a space opera series",
    "a true crime podcast",
]
CHORES = [
    "do the laundry",
    "clean the bathroom",
    "sort my taxes",
    "reply to emails",
    "fix the wobbly shelf",
    "water the plants",
]
SMALL_TALK = [
    ("It's {weather} here today.", "Ugh, or yay, depending! Any plans to get outside?"),
    ("Binged {show} last night instead of sleeping.", "Was it worth it?"),
    (
        "I really need to {chore} but I'm procrastinating.",
        "Try just five minutes of it. Starting is the hardest part.",
    ),
    ("Traffic was awful this morning.", "Commutes like that drain the whole day."),
    ("Do you ever get bored?", "Not really, every conversation is different. Do you?"),
    ("Weekend went by way too fast.", "They always do. Anything nice happen?"),
    ("Slept terribly, neighbours had a party.", "That's rough. Maybe an early night tonight?"),
    ("My plants are thriving for once.", "Nice, what changed?"),
    ("I think I'm coming down with a cold.", "Rest up, drink lots of water, and some soup."),
    ("Lol my phone autocorrected 'meeting' to 'meat thing'.", "Honestly a better agenda item."),
    ("Why is every meeting an hour long by default?", "Calendars love round numbers."),
    ("Had the best sandwich of my life at lunch.", "What was in it?"),
    ("Nothing much happening today, just checking in.", "Always nice to hear from you."),
    ("It's {weather} again, this city I swear.", "Classic. Stay dry, or cool, or warm!"),
    ("Started {show}, no spoilers please.", "My lips are sealed."),
]
TOPICS = [
    "a slow cooker",
    "a standing desk",
    "noise-cancelling headphones",
    "a road bike",
    "a cheap espresso machine",
    "a robot vacuum",
]
DISHES = [
    "chickpeas and spinach",
    "leftover rice and eggs",
    "a bag of lentils",
    "half a pumpkin",
    "tofu and broccoli",
    "some sad carrots",
]
REQUESTS = [
    (
        "Can you suggest a quick dinner with {dish}?",
        "Sure. A one-pan option: soften onion and garlic, add spices (cumin, paprika), throw in "
        "the {dish}, a splash of stock, simmer ten minutes, finish with lemon and herbs.",
    ),
    (
        "Is {topic} worth buying?",
        "It depends on how often you'd use it. Read a couple of long-term reviews, check the "
        "return policy, and set a budget before you look at deals.",
    ),
    (
        "How do I politely decline a meeting?",
        "Something like: 'Thanks for the invite. I can't make this one; could you share notes, "
        "or is there something I can answer async?' Short and friendly works best.",
    ),
    (
        "Write me a regex for a five digit zip code.",
        r"Use ^\d{{5}}$ for exactly five digits, or ^\d{{5}}(-\d{{4}})?$ to allow ZIP+4.",
    ),
    (
        "What's a good way to stop procrastinating on {chore_ing}?",
        "Make the first step tiny and specific, set a 15 minute timer, and remove the phone "
        "from the room. Reward yourself after.",
    ),
    (
        "Explain the difference between a Roth IRA and a traditional one, briefly.",
        "Traditional: contributions may be tax-deductible now, withdrawals are taxed later. "
        "Roth: you pay tax now, qualified withdrawals are tax-free.",
    ),
    (
        "How long should I boil an egg for a jammy yolk?",
        "About six and a half minutes from boiling, then straight into ice water.",
    ),
    (
        "Give me a stretching routine for a stiff back.",
        "Cat-cow ten times, child's pose for 30 seconds, knee-to-chest stretches, a gentle "
        "seated twist each side. Slow breathing throughout.",
    ),
    (
        "What should I name a spreadsheet of monthly bills?",
        "Keep it boring and searchable, like 'household-bills-2025'.",
    ),
    (
        "How do I get wine out of a carpet?",
        "Blot, don't rub. Cold water, then a mix of dish soap and white vinegar, blot again.",
    ),
    (
        "Can you summarise what a Gantt chart is?",
        "A bar chart of tasks over time: each bar is a task's start and end, so you see "
        "overlaps and dependencies at a glance.",
    ),
    (
        "Recommend a podcast for a long drive?",
        "If you like stories, try a narrative history series; for laughs, an improv comedy "
        "podcast. Download episodes before you go.",
    ),
    (
        "What's a polite way to ask a friend to pay me back?",
        "Keep it light: 'Hey, no rush, but could you send over the money from dinner when "
        "you get a sec?'",
    ),
    (
        "Tips for falling asleep faster?",
        "Same wake time every day, no screens for the last half hour, a cool dark room, and "
        "get up if you're still awake after twenty minutes.",
    ),
]


def _fill(rng: random.Random, text: str) -> str:
    chore = rng.choice(CHORES)
    return text.format(
        weather=rng.choice(WEATHER),
        show=rng.choice(SHOWS),
        chore=chore,
        chore_ing=chore.replace("do the", "doing the").replace("sort", "sorting"),
        topic=rng.choice(TOPICS),
        dish=rng.choice(DISHES),
    )


def exchange(rng: random.Random, pool: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One user turn and the assistant's reply, with slots filled (the same dish in both)."""
    user, reply = rng.choice(pool)
    seed = rng.random()
    a, b = random.Random(seed), random.Random(seed)
    return [("user", _fill(a, user)), ("assistant", _fill(b, reply))]
