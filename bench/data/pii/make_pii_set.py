"""Generate the labelled PII set in bench/data/pii/pii_sentences.json (seeded, deterministic).

Three kinds of first-person "memory" sentences:

- ``structured``: one or two identifiers each (email, phone, credit card with a valid Luhn
  digit, US SSN, IBAN with valid check digits, IPv4/IPv6, street address, account number,
  API key / token / password, date of birth), in varied templates, many without a cue word;
- ``name``: person names (full names and first names alone, from many origins), in
  templates with and without a relation cue ("my sister ...", "lunch with ...");
- ``location``: where the user lives or comes from ("I moved to Lisbon"): scored separately;
- ``clean``: ordinary statements about preferences, work, plans with months and weekdays,
  programming languages, companies, numbers, and cities in non-identifying use ("the
  conference is in Berlin"), which we treat as not personal (see bench/RESULTS_pii.md).

Each record: ``{"id", "split", "kind", "group", "text", "spans": [{"type", "start", "end"}]}``.
``split`` is ``dev`` (templates the recognizers were tuned on) or ``holdout`` (templates
written after tuning and not used for it).

    python bench/data/pii/make_pii_set.py            # writes pii_sentences.json
    python bench/data/pii/make_pii_set.py --check    # fails if the committed file is stale
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
from collections import Counter
from pathlib import Path

from templates import (  # type: ignore[import-not-found]
    CLEAN,
    CLEAN_SLOTS,
    FIRST_NAMES,
    HOLDOUT_CLEAN,
    HOLDOUT_NAMES,
    HOLDOUT_STRUCTURED,
    LAST_NAMES,
    LOCATION_TEMPLATES,
    NAME_TEMPLATES,
    RESIDENCE_CITIES,
    STREET_NAMES,
    STREET_TYPES,
    STRUCTURED_TEMPLATES,
    US_CITIES,
)

SEED = 20261122
OUT = Path(__file__).parent / "pii_sentences.json"
PER_STRUCTURED_TYPE = 36
N_NAMES = 180
N_LOCATIONS = 40
N_CLEAN = 240
PER_HOLDOUT_TYPE = 8
#: street addresses in Portuguese, Spanish, French and German formats (holdout)
N_EU_ADDRESSES = 40
N_HOLDOUT_NAMES = 40
N_HOLDOUT_CLEAN = 60


def luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    """A card number with ``prefix``, ``length`` digits and a valid Luhn check digit."""
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def card(rng: random.Random) -> str:
    kind = rng.choice(["visa", "visa", "mc", "amex", "discover"])
    if kind == "amex":
        n = luhn_complete(rng.choice(["34", "37"]), 15, rng)
        groups = [n[:4], n[4:10], n[10:]]
    else:
        prefix = {"visa": "4", "mc": str(rng.randint(51, 55)), "discover": "6011"}[kind]
        n = luhn_complete(prefix, 16, rng)
        groups = [n[i : i + 4] for i in range(0, 16, 4)]
    return rng.choice([" ", "-", ""]).join(groups)


def iban(rng: random.Random) -> str:
    country, bban = rng.choice(
        [
            ("DE", lambda: "".join(rng.choices(string.digits, k=18))),
            (
                "GB",
                lambda: (
                    rng.choice(["NWBK", "BARC", "HBUK", "LOYD"])
                    + "".join(rng.choices(string.digits, k=14))
                ),
            ),
            ("FR", lambda: "".join(rng.choices(string.digits, k=23))),
            ("ES", lambda: "".join(rng.choices(string.digits, k=20))),
            (
                "NL",
                lambda: (
                    rng.choice(["ABNA", "INGB", "RABO"]) + "".join(rng.choices(string.digits, k=10))
                ),
            ),
        ]
    )
    b = bban()
    rearranged = b + country + "00"
    num = int("".join(str(int(c, 36)) for c in rearranged))
    value = f"{country}{98 - num % 97:02d}{b}"
    if rng.random() < 0.6:
        value = " ".join(value[i : i + 4] for i in range(0, len(value), 4))
    return value


def ssn(rng: random.Random) -> str:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    parts = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    return rng.choice(["-", "-", "-", " "]).join(parts)


def phone(rng: random.Random) -> str:
    area = rng.choice(["212", "312", "415", "503", "617", "646", "702", "206", "303", "512"])
    ex, line = rng.randint(201, 989), rng.randint(1000, 9999)
    return rng.choice(
        [
            f"({area}) {ex}-{line}",
            f"{area}-{ex}-{line}",
            f"+1 {area} {ex} {line}",
            f"{area}.{ex}.{line}",
            f"+44 20 7{rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            f"+49 30 {rng.randint(1000000, 9999999)}",
            f"+33 1 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} "
            f"{rng.randint(10, 99)}",
        ]
    )


def email(rng: random.Random) -> str:
    first, last = rng.choice(FIRST_NAMES).lower(), rng.choice(LAST_NAMES).lower()
    local = rng.choice(
        [
            f"{first}.{last}",
            f"{first}{rng.randint(1, 99)}",
            f"{first[0]}{last}",
            f"{first}+news",
            f"{last}_{first}",
        ]
    )
    domain = rng.choice(
        [
            "gmail.com",
            "outlook.com",
            "example.org",
            "proton.me",
            "acme.io",
            "uni-heidelberg.de",
            "company.co.uk",
            "fastmail.fm",
            "startup.dev",
        ]
    )
    return f"{local}@{domain}"


def ip(rng: random.Random) -> str:
    if rng.random() < 0.8:
        return ".".join(str(rng.randint(1, 254)) for _ in range(4))
    return ":".join(f"{rng.randint(0, 0xFFFF):x}" for _ in range(8))


def street(rng: random.Random) -> str:
    number = rng.choice([str(rng.randint(1, 9999)), f"{rng.randint(1, 300)}{rng.choice('AB')}"])
    name = rng.choice(STREET_NAMES)
    kind = rng.choice(STREET_TYPES)
    value = f"{number} {rng.choice(['', '', 'N ', 'West '])}{name} {kind}"
    roll = rng.random()
    if roll < 0.25:
        value += f", Apt {rng.randint(1, 40)}{rng.choice(['', 'B', 'C'])}"
    if rng.random() < 0.45:
        city, state = rng.choice(US_CITIES)
        value += f", {city}, {state} {rng.randint(10000, 99999)}"
    if rng.random() < 0.1:
        value = value.lower()
    return value


# Street addresses written the Portuguese, Spanish, French and German way (issue 23).
_EU_STREETS = {
    "pt": (["Rua", "Avenida", "Travessa", "Praça", "Rua"],
           ["Augusta", "da Liberdade", "do Ouro", "de São Bento", "Garrett", "dos Fanqueiros",
            "Cândido dos Reis", "de Santa Catarina"]),
    "es": (["Calle", "Avenida", "Paseo", "C/", "Plaza", "Calle"],
           ["Mayor", "de Alcalá", "Gran Vía", "del Pez", "de América", "de la Castellana",
            "Serrano", "de Toledo"]),
    "fr": (["rue", "avenue", "boulevard", "place", "rue", "impasse"],
           ["de Rivoli", "du Bac", "des Martyrs", "Oberkampf", "Saint-Honoré", "Victor Hugo",
            "de la République", "Haussmann"]),
    "de": (["straße", "str.", "weg", "allee", "platz", " Straße"],
           ["Haupt", "Bahnhof", "Goethe", "Linden", "Mozart", "Schiller", "Berliner", "Kant"]),
}
_EU_CITIES = {"pt": ("1100-053", "Lisboa"), "es": ("28013", "Madrid"), "fr": ("75011", "Paris"),
              "de": ("10115", "Berlin")}  # fmt: skip


def eu_street(rng: random.Random) -> str:
    country = rng.choice(sorted(_EU_STREETS))
    kinds, names = _EU_STREETS[country]
    kind, name, number = rng.choice(kinds), rng.choice(names), str(rng.randint(1, 240))
    if country == "fr":
        value = f"{number} {kind} {name}"
    elif country == "de":
        joined = f"{name}{kind}" if not kind.startswith(" ") else f"{name}{kind}"
        value = f"{joined} {number}"
    else:
        comma = rng.choice(["", ","])
        value = f"{kind} {name}{comma} {number}"
        if rng.random() < 0.3:
            value += f", {rng.randint(1, 9)}º {rng.choice(['A', 'B', 'Esq.', 'Dto.'])}"
    if rng.random() < 0.35:
        code, city = _EU_CITIES[country]
        value += f", {code} {city}"
    if rng.random() < 0.1:
        value = value.lower()
    return value


def account(rng: random.Random) -> str:
    digits = "".join(rng.choices(string.digits, k=rng.randint(8, 14)))
    return rng.choice([digits, f"{digits[:4]}-{digits[4:]}", f"{rng.choice('ACPX')}{digits}"])


def _rand(rng: random.Random, alphabet: str, k: int) -> str:
    return "".join(rng.choices(alphabet, k=k))


def secret(rng: random.Random) -> str:
    alnum = string.ascii_letters + string.digits
    return rng.choice(
        [
            lambda: "sk-proj-" + _rand(rng, alnum + "_-", 40),
            lambda: "sk-ant-api03-" + _rand(rng, alnum, 48),
            lambda: "sk_live_" + _rand(rng, alnum, 24),
            lambda: "ghp_" + _rand(rng, alnum, 36),
            lambda: "xoxb-" + _rand(rng, string.digits, 11) + "-" + _rand(rng, alnum, 24),
            lambda: "AKIA" + _rand(rng, string.ascii_uppercase + string.digits, 16),
            lambda: "AIza" + _rand(rng, alnum + "_-", 35),
            lambda: "hf_" + _rand(rng, alnum, 34),
            lambda: (
                "eyJhbGciOiJIUzI1NiJ9.eyJ" + _rand(rng, alnum, 30) + "." + _rand(rng, alnum, 43)
            ),
            lambda: _rand(rng, alnum, 32),
        ]
    )()


def password(rng: random.Random) -> str:
    words = ["sunflower", "Tr0ub4dor", "hunter", "dragon", "Maple", "winter", "falcon", "Pa$$"]
    return rng.choice(
        [
            lambda: rng.choice(words) + str(rng.randint(1, 9999)),
            lambda: rng.choice(words) + rng.choice("!#&@") + str(rng.randint(10, 99)),
            lambda: _rand(rng, string.ascii_letters + string.digits + "!@#%", rng.randint(8, 14)),
            lambda: "-".join(rng.sample(["blue", "Horse", "staple", "river", "Tango"], 3)),
            lambda: str(rng.randint(1000, 999999)),  # PINs
        ]
    )()


def dob(rng: random.Random) -> str:
    y, m, d = rng.randint(1940, 2008), rng.randint(1, 12), rng.randint(1, 28)
    month = [
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
    ][m - 1]
    return rng.choice(
        [
            f"{month} {d}, {y}",
            f"{d} {month} {y}",
            f"{m:02d}/{d:02d}/{y}",
            f"{y}-{m:02d}-{d:02d}",
            f"{month} {d}",
            f"{d}.{m}.{y}",
        ]
    )


GENERATORS = {
    "EMAIL": email,
    "PHONE": phone,
    "CREDIT_CARD": card,
    "US_SSN": ssn,
    "IBAN": iban,
    "IP_ADDRESS": ip,
    "STREET_ADDRESS": street,
    "EU_STREET_ADDRESS": eu_street,
    "ACCOUNT_NUMBER": account,
    "SECRET": secret,
    "PASSWORD": password,
    "DATE_OF_BIRTH": dob,
}


def fill(template: str, values: dict[str, tuple[str, str]]) -> tuple[str, list[dict[str, object]]]:
    """Substitute ``{SLOT}`` markers, recording each inserted value's span and type."""
    text, spans, i = "", [], 0
    while (j := template.find("{", i)) != -1:
        k = template.index("}", j)
        text += template[i:j]
        label, value = values[template[j + 1 : k]]
        if label:
            spans.append({"type": label, "start": len(text), "end": len(text) + len(value)})
        text += value
        i = k + 1
    return text + template[i:], spans


def slots(template: str) -> list[str]:
    return [part.split("}")[0] for part in template.split("{")[1:]]


def structured(
    rng: random.Random,
    table: dict[str, list[str]] = STRUCTURED_TEMPLATES,
    per_type: int = PER_STRUCTURED_TYPE,
) -> list[dict[str, object]]:
    records = []
    for kind, templates in table.items():
        for n in range(per_type):
            template = templates[n % len(templates)]
            values = {}
            for slot in slots(template):
                gen = slot.rstrip("0123456789")
                label = {"PASSWORD": "SECRET", "EU_STREET_ADDRESS": "STREET_ADDRESS"}.get(gen, gen)
                values[slot] = (label, GENERATORS[gen](rng))
            text, spans = fill(template, values)
            records.append({"kind": "structured", "group": kind, "text": text, "spans": spans})
    return records


def person(rng: random.Random) -> str:
    first = rng.choice(FIRST_NAMES)
    return first if rng.random() < 0.3 else f"{first} {rng.choice(LAST_NAMES)}"


def names(
    rng: random.Random, templates: list[str] = NAME_TEMPLATES, count: int = N_NAMES
) -> list[dict[str, object]]:
    records = []
    for n in range(count):
        template = templates[n % len(templates)]
        values = {s: ("PERSON", person(rng)) for s in slots(template)}
        text, spans = fill(template, values)
        records.append({"kind": "name", "group": "PERSON", "text": text, "spans": spans})
    return records


def locations(rng: random.Random) -> list[dict[str, object]]:
    records = []
    for n in range(N_LOCATIONS):
        template = LOCATION_TEMPLATES[n % len(LOCATION_TEMPLATES)]
        text, spans = fill(template, {"CITY": ("LOCATION", rng.choice(RESIDENCE_CITIES))})
        records.append({"kind": "location", "group": "LOCATION", "text": text, "spans": spans})
    return records


def clean(
    rng: random.Random, templates: list[str] = CLEAN, count: int = N_CLEAN
) -> list[dict[str, object]]:
    records, seen = [], set()
    while len(records) < count:
        template = rng.choice(templates)
        values = {s: ("", rng.choice(CLEAN_SLOTS[s.rstrip("0123456789")])) for s in slots(template)}
        text, _ = fill(template, values)
        if text in seen:
            continue
        seen.add(text)
        records.append({"kind": "clean", "group": "CLEAN", "text": text, "spans": []})
    return records


def build() -> list[dict[str, object]]:
    rng = random.Random(SEED)
    records = structured(rng) + names(rng) + locations(rng) + clean(rng)
    holdout = (
        structured(rng, HOLDOUT_STRUCTURED, PER_HOLDOUT_TYPE)
        + names(rng, HOLDOUT_NAMES, N_HOLDOUT_NAMES)
        + clean(rng, HOLDOUT_CLEAN, N_HOLDOUT_CLEAN)
    )
    # Added after the rest (its own generator), so the records above stay as they were.
    eu_table = {"STREET_ADDRESS": [t.replace("{STREET_ADDRESS}", "{EU_STREET_ADDRESS}")
                                   for t in STRUCTURED_TEMPLATES["STREET_ADDRESS"]]}
    holdout += structured(random.Random(SEED + 23), eu_table, N_EU_ADDRESSES)
    for r in records:
        r["split"] = "dev"
    for r in holdout:
        r["split"] = "holdout"
    records += holdout
    for i, r in enumerate(records):
        r["id"] = f"pii-{i:04d}"
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    args = parser.parse_args()
    payload = json.dumps({"seed": SEED, "records": build()}, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if OUT.read_text() != payload:
            print(f"{OUT} is stale: rerun {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(payload)
    counts = Counter((r["split"], r["kind"]) for r in json.loads(payload)["records"])
    print(f"wrote {OUT} {dict(counts)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
