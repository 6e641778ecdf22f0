"""Vocabularies for the synthetic retrieval set (see make_conversations.py and README.md).

Plain lists only: names, places, things, and the synonym sets that let a question paraphrase
the turn that answers it instead of copying its words.
"""

from __future__ import annotations

FEMALE_NAMES = [
    "Priya",
    "Ana",
    "Hana",
    "Marta",
    "Sofia",
    "Ingrid",
    "Chloe",
    "Amara",
    "Yuki",
    "Leila",
    "Zofia",
    "Camille",
    "Nadia",
    "Rosa",
    "Keiko",
    "Fatima",
    "Greta",
    "Elena",
    "Maya",
    "Noor",
    "Bianca",
    "Sinead",
    "Tamsin",
    "Olga",
    "Ifeoma",
    "Lucia",
    "Mei",
    "Dagny",
    "Esther",
    "Paloma",
]
MALE_NAMES = [
    "Tomasz",
    "Rahul",
    "Diego",
    "Malik",
    "Jonas",
    "Kenji",
    "Oscar",
    "Felix",
    "Arjun",
    "Mateo",
    "Idris",
    "Lars",
    "Pavel",
    "Theo",
    "Kwame",
    "Hugo",
    "Ravi",
    "Emeka",
    "Nico",
    "Bram",
    "Wesley",
    "Callum",
    "Dmitri",
    "Yusuf",
    "Anders",
    "Rafael",
    "Ciaran",
    "Jun",
    "Marcus",
    "Elias",
]
USER_NAMES = ["Dana", "Sam", "Alex", "Robin", "Jordan", "Casey"]

# role -> (words the user says for the role, words a question may use instead)
ROLES: dict[str, tuple[list[str], list[str]]] = {
    "coworker": (["coworker", "teammate"], ["colleague", "workmate"]),
    "sister": (["sister", "little sister"], ["sibling", "sis"]),
    "brother": (["brother", "older brother"], ["sibling", "bro"]),
    "friend": (["friend", "old friend"], ["buddy", "pal"]),
    "neighbour": (["neighbour", "next-door neighbour"], ["neighbor", "next-door neighbor"]),
    "manager": (["manager", "boss"], ["supervisor", "team lead"]),
    "cousin": (["cousin"], ["relative", "family member"]),
}
ROLE_GENDER = {"sister": "f", "brother": "m"}

PETS = {
    "cat": (["kitten", "cat", "tabby"], ["pet", "feline", "kitty"]),
    "dog": (["puppy", "dog", "rescue pup"], ["pet", "pooch", "hound"]),
    "rabbit": (["rabbit", "bunny"], ["pet", "little animal"]),
    "parrot": (["parrot", "African grey"], ["pet bird", "bird"]),
}
PET_NAMES = [
    "Biscuit",
    "Maple",
    "Pickles",
    "Juniper",
    "Mochi",
    "Waffles",
    "Clementine",
    "Pepper",
    "Noodle",
    "Basil",
    "Tofu",
    "Ziggy",
    "Olive",
    "Pretzel",
    "Dumpling",
    "Saffron",
]
DOG_BREEDS = ["beagle", "border collie", "dachshund", "whippet", "Shiba Inu", "corgi"]

CITIES = [
    ("Lisbon", "Portugal"),
    ("Kyoto", "Japan"),
    ("Oaxaca", "Mexico"),
    ("Tbilisi", "Georgia"),
    ("Bergen", "Norway"),
    ("Hanoi", "Vietnam"),
    ("Edinburgh", "Scotland"),
    ("Cape Town", "South Africa"),
    ("Montreal", "Canada"),
    ("Valparaiso", "Chile"),
    ("Ljubljana", "Slovenia"),
    ("Marrakesh", "Morocco"),
    ("Hobart", "Australia"),
    ("Seville", "Spain"),
]
HOME_CITIES = ["Seattle", "Rotterdam", "Melbourne", "Leeds", "Pittsburgh", "Lyon"]
NEIGHBOURHOODS = [
    "Fremont",
    "Kralingen",
    "Fitzroy",
    "Headingley",
    "Lawrenceville",
    "Croix-Rousse",
    "Ballard",
    "Delfshaven",
    "Brunswick",
    "Chapel Allerton",
]

PROFESSIONS = [
    ("pediatric nurse", "works with kids at the hospital", "healthcare"),
    ("structural engineer", "signs off on bridge designs", "engineering"),
    ("pastry chef", "runs the dessert side of a busy restaurant", "food"),
    ("high school chemistry teacher", "teaches teenagers chemistry", "education"),
    ("veterinarian", "treats animals at a clinic", "animal care"),
    ("public defender", "represents people who can't afford a lawyer", "law"),
    ("airline pilot", "flies long-haul routes", "aviation"),
    ("urban planner", "designs bike lanes and zoning for the city", "city planning"),
    ("physiotherapist", "helps people recover from injuries", "healthcare"),
    ("sound engineer", "mixes records in a studio", "music"),
]

PROJECT_CODENAMES = [
    "Halcyon",
    "Bluebird",
    "Tamarack",
    "Quillfeather",
    "Ostinato",
    "Kestrel",
    "Driftwood",
    "Marigold",
    "Lodestar",
    "Pinecone",
    "Umbra",
    "Saltmarsh",
]
PROJECT_GOALS = [
    ("migrating the billing system to Kotlin", "payments code", "a language migration"),
    ("rebuilding the search ranking for the store", "product search", "search relevance"),
    (
        "moving our data warehouse off Oracle onto Postgres",
        "the analytics database",
        "a database migration",
    ),
    ("shipping the offline mode for the mobile app", "the phone app", "working without internet"),
    (
        "replacing the on-call alerting with something less noisy",
        "the pager setup",
        "incident alerts",
    ),
    ("building a fraud model for card transactions", "credit card fraud", "machine learning"),
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

DRINK_CHAINS = [
    [
        ("an oat milk flat white", "oat milk"),
        ("black cold brew", "cold brew"),
        ("green tea", "green tea"),
    ],
    [("a double espresso", "espresso"), ("decaf americanos", "decaf"), ("rooibos tea", "rooibos")],
    [
        ("a vanilla latte", "latte"),
        ("pour-over from a local roaster", "pour-over"),
        ("matcha", "matcha"),
    ],
    [("chai with soy milk", "chai"), ("a cortado", "cortado"), ("hot water with lemon", "lemon")],
]
DRINK_SWITCH_REASONS = [
    "it was upsetting my stomach",
    "the caffeine was wrecking my sleep",
    "it was getting way too expensive",
    "my dentist told me to cut the sugar",
]

RESTAURANTS = [
    ("Ethiopian", "Habesha", "injera"),
    ("Sichuan", "Chili House", "mapo tofu"),
    ("Georgian", "Suliko", "khachapuri"),
    ("Peruvian", "La Lucha", "ceviche"),
    ("Lebanese", "Cedar & Salt", "mezze"),
    ("Neapolitan pizza", "Forno Rosso", "margherita"),
    ("Korean barbecue", "Bulgogi Brothers", "short rib"),
    ("Oaxacan", "Casa Mole", "mole negro"),
]
ALLERGIES = [
    ("shellfish", "seafood", "the shrimp at the team dinner"),
    ("peanuts", "nuts", "a satay sauce at a food market"),
    ("penicillin", "an antibiotic", "the antibiotics for my ear infection"),
    ("birch pollen", "tree pollen", "a walk in the park in spring"),
]
INSTRUMENTS = [
    ("cello", "string instrument"),
    ("piano", "keyboard instrument"),
    ("trumpet", "brass instrument"),
    ("classical guitar", "guitar"),
    ("drums", "percussion"),
]
TEACHER_TITLES = ["Mr.", "Ms.", "Mrs."]
TEACHER_SURNAMES = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Castellanos",
    "Nakamura",
    "Brennan",
    "Adeyemi",
    "Kowalczyk",
]
LANGUAGES = [
    ("Portuguese", "Duolingo"),
    ("Japanese", "a night class"),
    ("Korean", "an app called Lingodeer"),
    ("Italian", "a conversation group"),
    ("Greek", "weekly tutoring on Zoom"),
]
CARS = [
    ("Honda Civic", "Subaru Outback"),
    ("Toyota Corolla", "Kia Niro EV"),
    ("VW Golf", "Tesla Model 3"),
    ("Ford Focus", "Mazda CX-5"),
]
BOOKS = [
    ("The Overstory", "Richard Powers"),
    ("Piranesi", "Susanna Clarke"),
    ("The Left Hand of Darkness", "Ursula K. Le Guin"),
    ("Middlemarch", "George Eliot"),
    ("Station Eleven", "Emily St. John Mandel"),
    ("The Remains of the Day", "Kazuo Ishiguro"),
]
GIFTS = [
    ("a pottery class voucher", "ceramics"),
    ("a vintage film camera", "photography"),
    ("tickets to see a jazz trio", "a concert"),
    ("a cast iron skillet", "cookware"),
    ("a hot air balloon ride", "an experience"),
]
RACES = [
    ("5k", "27 minutes"),
    ("10k", "58 minutes"),
    ("half marathon", "2 hours 5 minutes"),
    ("marathon", "4 hours 31 minutes"),
]
COMPANIES = [
    "Northwind Labs",
    "Fathom Analytics",
    "Brightwater Health",
    "Copperline Games",
    "Meridian Freight",
    "Tessellate AI",
]
ROLES_AT_WORK = [
    "staff engineer",
    "engineering manager",
    "product designer",
    "data scientist",
    "technical writer",
    "site reliability engineer",
]
APPOINTMENTS = [
    ("dentist", "a filling"),
    ("physio", "my knee"),
    ("eye doctor", "new glasses"),
    ("dermatologist", "a mole check"),
]
HIKES = [
    ("a sunrise hike up to the old shrine", "an early morning walk"),
    ("a cooking class with a grandmother", "a cooking lesson"),
    ("the night market", "street food at night"),
    ("kayaking along the coast", "being out on the water"),
    ("a wine tasting in the hills", "tasting local wine"),
]
HOTELS = [
    "a ryokan called Hoshinoya",
    "a guesthouse called Casa Azul",
    "an Airbnb above a bakery",
    "a boutique hotel called The Lantern",
    "a cabin called Alta Vista",
    "a hostel called Tin Roof",
]
