"""Word lists that keep the NER model's false positives out of redaction.

en_core_web_sm tags capitalised tools, languages and brands as PERSON ("I prefer Python") and
months as people in short sentences. These lists are deliberately generic (what a developer or
a user talks about), not tuned to any test sentence; apps add their own via
``RedactionPolicy(allow=...)``.
"""

from __future__ import annotations

import re

_TECH = """
python java javascript typescript rust go golang kotlin swift scala ruby perl php haskell
elixir erlang clojure julia fortran cobol lua dart matlab sql nosql graphql html css bash
zsh powershell c++ c# f# objective-c assembly zig nim ocaml lisp scheme racket prolog
django flask fastapi pandas numpy scipy polars pytorch tensorflow keras jax sklearn
scikit-learn spark hadoop kafka airflow dbt snowflake databricks postgres postgresql mysql
sqlite mongodb redis elasticsearch opensearch cassandra dynamodb neo4j supabase firebase
docker kubernetes k8s terraform ansible helm jenkins github gitlab bitbucket git jira
confluence notion slack discord zoom teams trello asana figma sketch miro linear vercel
netlify heroku aws azure gcp linux ubuntu debian fedora windows macos ios android react
vue angular svelte nextjs next.js node node.js deno bun webpack vite jest pytest
langchain langgraph openai anthropic claude chatgpt gpt gemini llama mistral copilot
cursor vscode vim neovim emacs intellij pycharm xcode excel word powerpoint outlook
tableau looker grafana prometheus datadog sentry splunk jupyter colab kaggle
streamlit gradio huggingface spacy presidio pydantic sqlalchemy celery rabbitmq nginx
apache tomcat graphql grpc rest json yaml toml markdown latex
"""

_BRANDS = """
google microsoft apple amazon meta facebook instagram whatsapp twitter x linkedin netflix
spotify uber lyft airbnb tesla nvidia intel amd ibm oracle salesforce adobe shopify stripe
paypal visa mastercard ikea starbucks costco walmart target youtube tiktok reddit
wikipedia dropbox box zoom duolingo strava peloton fitbit garmin kindle audible
"""

_TIME = """
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
saturday sunday mon tue tues wed thu thur thurs fri sat sun today tomorrow yesterday
weekend christmas easter thanksgiving halloween ramadan diwali hanukkah q1 q2 q3 q4
"""

# Capitalised common words the model sometimes reads as names at the start of a sentence or
# in titles. "User" opens every extracted fact ("User lives in Lyon").
_COMMON = """
user user's users assistant
i me my we our you team beta alpha release sprint standup retro roadmap okr kpi mvp
api sdk cli ui ux ci cd qa pr prs devops mlops ml ai llm nlp etl bi crm erp saas
hi hello hey thanks thank dear cheers regards ok okay yes no please sorry
mom dad mum grandma grandpa auntie uncle doctor nurse boss
email e-mail mail call phone text ping ask tell send message meet remind note todo
marketing finance sales legal hr engineering support accounting ops security product design
procurement compliance research management leadership operations it admin devrel
"""

# Verbs that open an imperative ("Use Kotlin", "Ask Sofia about it"): the model folds them into
# PERSON spans. Verbs that are also common first names (Mark, Bill, Pat, Sue, Will) are left out.
_IMPERATIVES = """
use ask tell call send email text remind ping invite thank meet message add book schedule get
let make try check see show give help keep run write read move set put pick bring take find
buy pay ship deliver forward reply contact visit tell talk say cancel review approve sign
install deploy update open close start stop wait join follow
"""
IMPERATIVES: frozenset[str] = frozenset(_IMPERATIVES.split())

NOT_A_NAME: frozenset[str] = frozenset(
    w.casefold() for block in (_TECH, _BRANDS, _TIME, _COMMON) for w in block.split()
)

# A place name identifies a person only when it says where they live, come from or are:
# matched against the text just before the place.
_RESIDENCE_WORDS = (
    r"(?i)\b(?:live[sd]?|living|moved|moving|move|relocat\w*|resid\w*|based|born|raised|"
    r"grew\s+up|hometown|home\s+town|home\s+is|address|(?:i'?m|i\s+am|we'?re|we\s+are|originally|come|comes|came|hails?)\s+from|neighbou?rhood|located|"
    r"stay(?:ing)?\s+(?:in|at)|house\s+in|flat\s+in|apartment\s+in)\b"
)
RESIDENCE_CUE = re.compile(_RESIDENCE_WORDS + r"[^.!?\n]{0,30}$")
# The same cue anywhere in a text: without it, no place in the text can be reported.
RESIDENCE_WORD = re.compile(_RESIDENCE_WORDS)
