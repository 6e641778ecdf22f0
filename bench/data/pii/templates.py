"""Templates and word lists for make_pii_set.py. ``{SLOT}`` markers are filled by the generator;
a trailing digit (``{EMAIL2}``) makes a second, independent value of the same kind."""

STRUCTURED_TEMPLATES: dict[str, list[str]] = {
    "EMAIL": [
        "My email is {EMAIL}",
        "You can reach me at {EMAIL} after work.",
        "{EMAIL} is the address I use for newsletters",
        "Send the invoice to {EMAIL} please",
        "I switched my login to {EMAIL} last week.",
        "cc {EMAIL} and {EMAIL2} on the thread",
    ],
    "PHONE": [
        "My phone number is {PHONE}",
        "Call me on {PHONE} if the build breaks.",
        "My cell is {PHONE}.",
        "Text {PHONE} when you arrive",
        "The dentist's office gave me {PHONE} as a callback number",
        "I can be reached at {PHONE} or by email",
    ],
    "CREDIT_CARD": [
        "My card number is {CREDIT_CARD}",
        "Charge it to {CREDIT_CARD}, expiry 04/29",
        "I paid with {CREDIT_CARD} yesterday.",
        "Use the Visa ending {CREDIT_CARD} for subscriptions",
        "{CREDIT_CARD} is my work card",
        "The company card is {CREDIT_CARD}.",
    ],
    "US_SSN": [
        "My SSN is {US_SSN}",
        "My social security number is {US_SSN}.",
        "For the tax form: {US_SSN}",
        "ssn {US_SSN}",
        "I wrote {US_SSN} on the W-2 form by mistake",
        "Her social security number, {US_SSN}, was on the letter.",
    ],
    "IBAN": [
        "My IBAN is {IBAN}",
        "Please wire the refund to {IBAN}.",
        "Salary goes to {IBAN}",
        "Rent is paid from {IBAN} on the first of the month",
        "{IBAN} is my savings account",
        "Use IBAN {IBAN} for the transfer.",
    ],
    "IP_ADDRESS": [
        "My home server is at {IP_ADDRESS}",
        "SSH into {IP_ADDRESS} to check the logs.",
        "The VPN gave me {IP_ADDRESS} today",
        "My router's public IP is {IP_ADDRESS}.",
        "I whitelisted {IP_ADDRESS} and {IP_ADDRESS2} in the firewall",
        "Grafana runs on {IP_ADDRESS}:3000 at home",
    ],
    "STREET_ADDRESS": [
        "I live at {STREET_ADDRESS}",
        "Ship the package to {STREET_ADDRESS}.",
        "My new address is {STREET_ADDRESS}",
        "We moved into {STREET_ADDRESS} in the spring.",
        "Deliveries go to {STREET_ADDRESS}, ring twice",
        "{STREET_ADDRESS} is where my parents live",
    ],
    "ACCOUNT_NUMBER": [
        "My account number is {ACCOUNT_NUMBER}",
        "Checking account: {ACCOUNT_NUMBER}",
        "My bank account number is {ACCOUNT_NUMBER}.",
        "The customer number on the bill is {ACCOUNT_NUMBER}",
        "Policy number {ACCOUNT_NUMBER} covers the car",
        "acct # {ACCOUNT_NUMBER} at the credit union",
    ],
    "SECRET": [
        "My OpenAI key is {SECRET}",
        "Here's the token: {SECRET}",
        "export API_KEY={SECRET}",
        "I rotated the key to {SECRET} yesterday.",
        "Use {SECRET} for the staging deploy",
        "Authorization: Bearer {SECRET}",
        "my password is {PASSWORD}",
        "The wifi password is {PASSWORD}.",
        "password: {PASSWORD}",
        "My PIN is {PASSWORD}",
        "DB_PASSWORD={PASSWORD}",
        "The password for my laptop is {PASSWORD}",
    ],
    "DATE_OF_BIRTH": [
        "I was born on {DATE_OF_BIRTH}",
        "My date of birth is {DATE_OF_BIRTH}.",
        "DOB: {DATE_OF_BIRTH}",
        "My birthday is {DATE_OF_BIRTH}",
        "Born {DATE_OF_BIRTH} in a small town",
        "My birth date is {DATE_OF_BIRTH}, put it on the form",
    ],
    "MIXED": [
        "Email {EMAIL} or call {PHONE}",
        "Card {CREDIT_CARD} and my SSN {US_SSN} are in the drawer",
        "Send it to {STREET_ADDRESS} and mail a copy to {EMAIL}",
        "My password is {PASSWORD} and my account number is {ACCOUNT_NUMBER}",
        "Wire it to {IBAN}; questions to {EMAIL}.",
        "Server {IP_ADDRESS} uses key {SECRET}",
    ],
}

NAME_TEMPLATES = [
    "My sister {PERSON} is visiting next week",
    "I had lunch with {PERSON} yesterday",
    "{PERSON} from accounting approved the budget",
    "My manager is {PERSON}.",
    "Remind me to call {PERSON} on Friday",
    "I'm meeting {PERSON} for coffee",
    "My name is {PERSON}",
    "{PERSON} and I are planning a hiking trip",
    "Send the draft to {PERSON} before noon",
    "My doctor, {PERSON}, said to rest",
    "I went to the concert with {PERSON} and {PERSON2}",
    "{PERSON} recommended this book to me",
    "Ask {PERSON} about the deployment",
    "My son {PERSON} starts school in September",
    "I've known {PERSON} since college.",
    "Dr. {PERSON} moved my appointment",
    "Please call me {PERSON}",
    "My best friend {PERSON} lives nearby",
    "{PERSON} is my landlord",
    "I owe {PERSON} twenty dollars",
]

LOCATION_TEMPLATES = [
    "I live in {CITY}",
    "We moved to {CITY} last year",
    "I'm from {CITY} originally",
    "I grew up in {CITY}",
    "My family is based in {CITY}",
    "I'm relocating to {CITY} in the summer",
    "I was born and raised in {CITY}",
    "Home is {CITY} these days",
]

FIRST_NAMES = """
Maria James Aisha Chen Olga Rahul Fatima Lukas Sofia Kwame Hiroshi Isabella Mohammed
Emma Diego Priya Noah Yuki Amara Liam Ingrid Mateo Zara Oliver Leila Ethan Nadia Tomasz
Grace Ahmed Elena Daniel Mei Samuel Ana Viktor Chloe Arjun Hannah Pedro Sarah Kofi Lucia
Benjamin Anya Carlos Julia Omar Nina David Ines Michael Jennifer Robert Patricia Thomas
Linda Sven
""".split()

LAST_NAMES = """
Garcia Smith Okafor Wang Petrova Sharma Haddad Schneider Rossi Mensah Tanaka Martinez
Khan Johnson Fernandez Patel Brown Sato Nwosu Murphy Larsen Lopez Ahmed Wilson Kowalski
Dubois Nguyen Kim Cohen Silva Andersson Müller O'Brien Rodriguez Yilmaz Novak Taylor
Hernandez Ivanova Clarke Moreau Bianchi Gupta Jensen
""".split()

STREET_NAMES = (
    "Oak|Maple|Elm|Washington|Lincoln|Sunset|Highland|Cedar|Mill|Church|King|Queen|Main|"
    "High|Park|Lake|Pine|Hillcrest|Baker|Abbey|Willow|Franklin|Jefferson|Chestnut|Riverside|"
    "Magnolia|5th|42nd|Prospect|Orchard|Forest Hill|Martin Luther King"
).split("|")

STREET_TYPES = """
Street St Avenue Ave Road Rd Boulevard Blvd Lane Drive Court Way Place Terrace Parkway
""".split()

US_CITIES = [
    ("Springfield", "IL"),
    ("Portland", "OR"),
    ("Austin", "TX"),
    ("Denver", "CO"),
    ("Madison", "WI"),
    ("Raleigh", "NC"),
    ("Boise", "ID"),
    ("Columbus", "OH"),
    ("Tucson", "AZ"),
    ("Albany", "NY"),
]

RESIDENCE_CITIES = (
    "Lisbon|Denver|Nairobi|Toronto|Melbourne|Seoul|Munich|Austin|Bangalore|Dublin|Lagos|"
    "Manchester|Osaka|Mexico City|Krakow|Boston"
).split("|")

CLEAN = [
    "I prefer {LANG} for data analysis",
    "We ship the beta in {MONTH}",
    "I usually go to the gym on {DAY} mornings",
    "Our team switched from {LANG} to {LANG2} last quarter",
    "I like my coffee black with no sugar",
    "The standup moved to {DAY} at 10",
    "I'm learning {LANG} in my spare time",
    "We use {TOOL} for deployment and {TOOL2} for monitoring",
    "I work at {COMPANY} on the data platform team",
    "The conference is in {CITY} this {MONTH}",
    "I'd love to visit {CITY} someday",
    "The {CITY} office closes early on {DAY}s",
    "I read a great book about the history of {CITY}",
    "Flights to {CITY} are expensive in {MONTH}",
    "Please keep answers short and use bullet points",
    "I prefer dark mode in every editor",
    "Remind me to review the pull request on {DAY}",
    "Our release train leaves every second {DAY}",
    "I'm vegetarian and don't eat fish",
    "I have two cats and a dog",
    "We migrated the billing service to {TOOL} in {MONTH}",
    "The quarterly review is scheduled for late {MONTH}",
    "I'm allergic to peanuts",
    "My favourite cuisine is {CUISINE}",
    "I speak {LANGUAGE} and a bit of {LANGUAGE2}",
    "I enjoy {CUISINE} food on {DAY} nights",
    "{COMPANY} released a new model this week",
    "I think {COMPANY} has the best developer docs",
    "The password reset flow is broken on mobile",
    "My account was upgraded to the premium plan",
    "The token expired so I logged in again",
    "Version {VERSION} fixed the memory leak",
    "We hit {NUMBER} daily users in {MONTH}",
    "I paid ${PRICE} for the course",
    "The meeting room on floor 4 is booked until 3pm",
    "I run 5 miles before work on {DAY}s",
    "Order 3 pizzas for the team lunch on {DAY}",
    "I was born to code, honestly",
    "Our {LANG} services handle {NUMBER} requests a minute",
    "I prefer tabs over spaces",
    "The sprint ends on {DAY} the 14th",
    "Let's schedule the retro for the first week of {MONTH}",
    "I'm tired of debugging flaky tests",
    "I watch {SPORT} every weekend",
    "My goal this year is to run a marathon",
    "We deprecated the v1 API in {MONTH} {YEAR}",
    "I started this job in {YEAR}",
    "The {TOOL} cluster has 12 nodes",
    "Use {LANG} type hints everywhere please",
    "I take the train to work on {DAY}s and {DAY2}s",
    "I'm saving up for a new laptop",
    "I like jazz, especially live sets",
    "The launch slipped from {MONTH} to {MONTH2}",
    "I mostly write {LANG} and some {LANG2}",
    "Our biggest customer is in the {INDUSTRY} industry",
    "I'm a night owl and code best after 10pm",
    "The {COMPANY} outage took down our CI for an hour",
    "Keep the tone friendly but concise",
    "I moved the meeting to next {DAY}",
    "We're hiring two more engineers in {MONTH}",
]

CLEAN_SLOTS = {
    "LANG": "Python|Rust|Go|TypeScript|Java|Kotlin|Scala|Ruby|Elixir|Haskell|C++|Julia|Swift|R|SQL|Clojure".split("|"),
    "MONTH": "January|February|March|April|May|June|July|August|September|October|November|December".split("|"),
    "DAY": "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday".split("|"),
    "TOOL": "Kubernetes|Terraform|Docker|Airflow|Postgres|Redis|Grafana|Jenkins|Kafka|Ansible|Datadog|Snowflake".split("|"),
    "COMPANY": "Google|Microsoft|Stripe|Shopify|Atlassian|Spotify|Netflix|Salesforce|Cloudflare|Anthropic|OpenAI|Siemens|Infosys".split("|"),
    "CITY": "Berlin|Paris|Tokyo|Chicago|Barcelona|Kyoto|Prague|San Francisco|Singapore|Amsterdam|Rome|Vienna".split("|"),
    "CUISINE": "Thai|Italian|Ethiopian|Korean|Mexican|Lebanese|Japanese".split("|"),
    "LANGUAGE": "Spanish|German|French|Portuguese|Mandarin|Hindi|Arabic".split("|"),
    "VERSION": "3.12.1|2.0|1.4.7|18.2|0.9.3".split("|"),
    "NUMBER": "10,000|250k|1.2 million|5000|40,000".split("|"),
    "PRICE": "49|1,250|299|15".split("|"),
    "SPORT": "football|basketball|Formula 1|tennis|cricket".split("|"),
    "YEAR": "2019|2021|2023|2024".split("|"),
    "INDUSTRY": "insurance|retail|logistics|healthcare|gaming".split("|"),
}

# --- held out: written after the recognizers were tuned on the sets above and never used to
# tune them; the bench reports these sentences separately as a check against overfitting.

HOLDOUT_STRUCTURED: dict[str, list[str]] = {
    "EMAIL": ["Forward receipts to {EMAIL}", "old address was {EMAIL}, new one is {EMAIL2}"],
    "PHONE": ["WhatsApp me at {PHONE}", "my landline: {PHONE}"],
    "CREDIT_CARD": ["Netflix bills {CREDIT_CARD} every month", "new card: {CREDIT_CARD}"],
    "US_SSN": ["SSN: {US_SSN}", "they asked for my social, it's {US_SSN}"],
    "IBAN": ["refund IBAN {IBAN}", "my German account is {IBAN}"],
    "IP_ADDRESS": ["ping {IP_ADDRESS} to test", "blocked {IP_ADDRESS} after the scan"],
    "STREET_ADDRESS": ["Pick me up at {STREET_ADDRESS}", "office moved to {STREET_ADDRESS}"],
    "ACCOUNT_NUMBER": ["savings account no. {ACCOUNT_NUMBER}", "member ID {ACCOUNT_NUMBER}"],
    "SECRET": [
        "GITHUB_TOKEN={SECRET}",
        "the staging api key is {SECRET}",
        "my passcode is {PASSWORD}",
        "passwd={PASSWORD}",
    ],
    "DATE_OF_BIRTH": ["d.o.b. {DATE_OF_BIRTH}", "I'm born {DATE_OF_BIRTH}"],
}

HOLDOUT_NAMES = [
    "Thanks to {PERSON} for the review",
    "{PERSON} said the demo went well",
    "I'm driving {PERSON} to the airport tomorrow",
    "Dinner at {PERSON}'s place on Saturday",
    "Can you draft a birthday note for {PERSON}?",
    "{PERSON} is pregnant with twins",
    "My coworker {PERSON} covers for me on Fridays",
    "Invite {PERSON} to the planning meeting",
]

HOLDOUT_CLEAN = [
    "I'd rather use {TOOL} than write my own scheduler",
    "Summaries should fit on one screen",
    "The {MONTH} newsletter goes out on a {DAY}",
    "I moved from {LANG} notebooks to scripts",
    "Our {COMPANY} contract renews every {MONTH}",
    "{LANG} is my go-to for quick prototypes",
    "Weekend plan: hike, read, sleep",
    "The {CITY} meetup was packed last {DAY}",
    "I want more examples and fewer caveats",
    "We have a hard deadline at the end of {MONTH}",
    "I keep my notes in plain Markdown files",
    "Set reminders 15 minutes before every meeting",
]
