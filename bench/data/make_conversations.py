"""Generate the labelled retrieval set in bench/data/conversations.json (seeded, deterministic).

Several long user/assistant conversations over many dated sessions; each conversation draws
fact kinds from facts.py (with questions and the ids of the turns that answer them),
distractor turns that mention the same entities without answering, and small talk from
noise.py. See README.md for the construction and the question kinds.

    python bench/data/make_conversations.py            # writes bench/data/conversations.json
    python bench/data/make_conversations.py --check    # fails if the committed file is stale
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import chatter
import fact_kinds
import facts
import noise
import vocabulary

SEED = 20251122
N_CONVERSATIONS = 5
KINDS_PER_CONVERSATION = 15
CHATTER_PER_FACT = 3
OUT = Path(__file__).parent / "conversations.json"


def _place(
    rng: random.Random, fact: facts.Fact, n_sessions: int
) -> list[tuple[int, list[facts.Turn]]]:
    """Episodes in strictly increasing sessions; distractors from the first episode's on."""
    sessions = sorted(rng.sample(range(n_sessions), len(fact.episodes)))
    placed = list(zip(sessions, fact.episodes, strict=True))
    placed += [(rng.randrange(sessions[0], n_sessions), d) for d in fact.distractors]
    return placed


def make_conversation(
    rng: random.Random, index: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One conversation and its questions (evidence as turn ids)."""
    cid = f"c{index + 1}"
    user = vocabulary.USER_NAMES[index % len(vocabulary.USER_NAMES)]
    ctx = facts.Ctx(rng, user)
    n_sessions = rng.randint(14, 20)
    kinds = rng.sample(fact_kinds.FACT_KINDS, KINDS_PER_CONVERSATION)
    blocks: list[list[tuple[str, str, str]]] = [[] for _ in range(n_sessions)]
    # Blocks of (speaker, text, tag) per session, before shuffling.
    pending: list[list[list[tuple[str, str, str]]]] = [[] for _ in range(n_sessions)]
    questions: list[tuple[str, facts.Question]] = []
    for fi, kind in enumerate(kinds):
        fact = kind(ctx)
        for exchange in chatter.around(rng, fact.slots, CHATTER_PER_FACT):
            (_, said), (_, reply) = exchange
            fact.distractors.append([ctx.say(said), facts.Turn("assistant", reply)])
        for session, episode in _place(rng, fact, n_sessions):
            pending[session].append(
                [(t.speaker, t.text, f"f{fi}.{t.tag}" if t.tag else "") for t in episode]
            )
        questions += [(f"f{fi}", q) for q in fact.questions]
    for s in range(n_sessions):
        for _ in range(rng.randint(1, 3)):
            pool = noise.SMALL_TALK if rng.random() < 0.55 else noise.REQUESTS
            pending[s].append([(sp, tx, "") for sp, tx in noise.exchange(rng, pool)])
        rng.shuffle(pending[s])
        opening = [
            (sp, tx, "")
            for sp, tx in zip(("user", "assistant"), rng.choice(noise.GREETINGS), strict=True)
        ]
        closing = [
            (sp, tx, "")
            for sp, tx in zip(("user", "assistant"), rng.choice(noise.CLOSINGS), strict=True)
        ]
        blocks[s] = opening + [t for block in pending[s] for t in block] + closing

    date = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randint(0, 60))
    sessions, tag_ids = [], {}
    for s, turns in enumerate(blocks):
        sid = f"{cid}-s{s + 1:02d}"
        records = []
        for t, (speaker, text, tag) in enumerate(turns):
            tid = f"{sid}-t{t + 1:02d}"
            records.append({"id": tid, "speaker": speaker, "text": text})
            if tag:
                tag_ids[tag] = tid
        sessions.append({"id": sid, "date": date.isoformat(), "turns": records})
        date += dt.timedelta(days=rng.randint(2, 9))

    out_questions = []
    for prefix, q in questions:
        evidence = [tag_ids[f"{prefix}.{tag}"] for tag in q.tags]
        out_questions.append(
            {
                "conversation": cid,
                "question": q.text,
                "kind": q.kind,
                "evidence": evidence,
                "answer": q.answer,
            }
        )
    return {"id": cid, "user": user, "sessions": sessions}, out_questions


def build(seed: int = SEED) -> dict[str, Any]:
    """The whole data set as a JSON-ready dict."""
    rng = random.Random(seed)
    conversations, questions = [], []
    for i in range(N_CONVERSATIONS):
        conv, qs = make_conversation(rng, i)
        conversations.append(conv)
        questions += qs
    for n, q in enumerate(questions, 1):
        q["id"] = f"q{n:03d}"
    return {"seed": seed, "conversations": conversations, "questions": questions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="fail if --out differs")
    args = parser.parse_args()
    text = json.dumps(build(args.seed), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        sys.exit(0 if args.out.read_text() == text else "conversations.json is stale")
    args.out.write_text(text)
    data = json.loads(text)
    turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
    sessions = sum(len(c["sessions"]) for c in data["conversations"])
    kinds = Counter(q["kind"] for q in data["questions"])
    print(
        f"{len(data['conversations'])} conversations, {sessions} sessions, {turns} turns, "
        f"{len(data['questions'])} questions {dict(kinds)} -> {args.out}"
    )


if __name__ == "__main__":
    main()
