"""The keyword side of the search statements (``_search_sql.search_ranked`` and
``search_fill``): the query's lexemes weighed by the keyword statistics (``_lexemes.py``), its
coverage of an item, and the keyword candidates. ``{s}`` is the (validated) schema name; table
alias ``i`` is store_items."""

from __future__ import annotations

# A lexeme quoted as a tsquery operand, so it is not parsed (and stemmed) again.
# chr(92) is a backslash: a quoted one would read as an escape under
# standard_conforming_strings=off.
_QUOTED = "'''' || replace(replace(l, chr(92), chr(92) || chr(92)), '''', '''''') || ''''"


# A lexeme's frequency (column ``l``) looked up in the statistics the client caches and sends
# along (%(st_freqs)s: Postgres's most common elements of the full-text column, as
# chr(1) lexeme chr(2) frequency ... chr(1); lexemes.py), NULL when not listed. A text search
# rather than arrays: parsing 1,000 listed lexemes and their frequencies into a text[] and a
# float8[] on every search cost 0.4-0.5 ms of server CPU (20k items, Zipfian words), a quarter
# of PostgresStore's whole search. Found by split_part, which compares bytes: strpos and substr
# count the characters before the match (UTF-8), three passes over the 17 kB text per lexeme
# (0.44 ms for a six-lexeme query against 0.12; bench/RESULTS.md, issue 28 session 14). The
# text after the lexeme's entry starts with its frequency; a lexeme is listed once, and no
# lexeme holds a control character (the parser splits words at them).
LEXEME_FREQ = """nullif(split_part(split_part(%(st_freqs)s, chr(1) || l || chr(2), 2),
                          chr(1), 1), '')::float8"""

# The query's distinct lexemes (stemmed, stop words removed by the store's text config), each
# with its weight, whether it is rare (see lexemes.py) and itself as a tsquery (``tq``, for
# the coverage). Computed in the search statement itself, so a search costs one round trip,
# not one for the lexemes and another for the ranking.
_QUERY_LEXEMES = f"""
ql AS MATERIALIZED (
    SELECT l, -ln(least(greatest(coalesce(freq, %(st_missing)s), %(st_min_freq)s),
                        %(st_max_freq)s)) AS w,
           coalesce(freq, 0) * %(st_rows)s <= %(common_rows)s AS rare,
           ({_QUOTED})::tsquery AS tq
    FROM (SELECT l, {LEXEME_FREQ} AS freq
          FROM unnest(tsvector_to_array(to_tsvector(%(text_config)s::regconfig, %(query)s)))
              AS q(l)) AS f
)"""


def terms(*, hybrid: bool) -> str:
    """CTEs ``ql`` and ``terms``: the query's total weight and its keyword tsquery, an OR of
    its rare lexemes (NULL when none is rare: the keyword branch then costs nothing; vectors
    find what common words would). Keyword-only stores fall back to every lexeme."""
    rare = f"string_agg({_QUOTED}, ' | ') FILTER (WHERE rare)"
    tq = rare if hybrid else f"coalesce({rare}, string_agg({_QUOTED}, ' | '))"
    return f"""{_QUERY_LEXEMES},
terms AS MATERIALIZED (
    SELECT sum(w) AS total_w, ({tq})::tsquery AS tq FROM ql
)"""


# Coverage: the IDF-weighted share of the query's lexemes that the item's text contains. Each
# lexeme is looked up in the item's tsvector (sorted: a binary search), rather than compared
# with an array of all its lexemes built per query lexeme and candidate (~0.5 ms of server
# CPU for 85 candidates, 20k items).
COVERAGE = """
coalesce((SELECT sum(ql.w) FROM ql WHERE i.search_tsv @@ ql.tq)
         / nullif((SELECT total_w FROM terms), 0), 0.0)"""


# The keyword levels of a hybrid search (see _keyword_candidates), as tsquery texts, best
# first: items holding three or more of the query's rare lexemes (``rq``), then exactly two,
# then exactly one, the rarest lexeme's items first.
_KEYWORD_LEVELS = f"""
rq AS MATERIALIZED (
    SELECT l, w, q, tq, row_number() OVER (ORDER BY w DESC, l) AS n
    FROM (SELECT l, w, tq, {_QUOTED} AS q FROM ql WHERE rare) AS r
),
pairs AS MATERIALIZED (
    SELECT (SELECT string_agg(a.q || ' & ' || b.q, ' | ')
            FROM rq AS a JOIN rq AS b ON a.n < b.n) AS two,
           (SELECT string_agg(a.q || ' & ' || b.q || ' & ' || c.q, ' | ')
            FROM rq AS a JOIN rq AS b ON a.n < b.n JOIN rq AS c ON b.n < c.n) AS three
),
levels AS MATERIALIZED (
    SELECT n, tq::tsquery AS tq FROM (
        SELECT 0 AS n, three AS tq FROM pairs
        UNION ALL
        SELECT 1, '(' || two || ')' || coalesce(' & !(' || three || ')', '') FROM pairs
        UNION ALL
        SELECT 1 + a.n, a.q || coalesce(
            ' & !(' || (SELECT string_agg(b.q, ' | ') FROM rq AS b WHERE b.n <> a.n) || ')', '')
        FROM rq AS a
    ) AS x
    WHERE tq IS NOT NULL
)"""


# Queries with more rare lexemes than this rank their matches by ts_rank, as before the levels:
# the levels' tsqueries grow as the cube of the count (17 rare lexemes: 680 triples, 0.3 s).
MAX_LEVEL_LEXEMES = 6


# A hybrid search reads up to this many times ``%(k)s`` rows holding any of the query's rare
# lexemes in its first scan (``kw_every``) when the statistics say there are no more: that is
# then all of them, and the keyword levels are chosen from those rows (``_LEVEL``) instead of
# read again level by level (up to eight more scans: 161 of a rare-word search's 1,870
# buffers at 20k items, issue 26). When they say more, the scan stops at ``%(k)s`` + 1 as
# before: reading 2k rows to throw them away cost 35-44 buffers a search.
HELD_MATCHES = 2

# An item's keyword level (see _KEYWORD_LEVELS) from its tsvector: 0 with three or more of the
# query's rare lexemes, 1 with exactly two, else 1 + the rank of the one it holds. One pass
# over rq per item, with each lexeme's tsquery made once (``rq.tq``): counting, then finding
# the one held, each casting ``rq.q`` anew, cost about 0.2 ms of server time where a
# question's rare words matched 173 items (bench/RESULTS.md, issue 25 session 17).
_LEVEL = """(SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN 1 + min(rq.n)
                              WHEN 2 THEN 1 ELSE 0 END
         FROM rq WHERE i.search_tsv @@ rq.tq)"""


def keyword_candidates(s: str, columns: str, where: str, *, hybrid: bool) -> str:
    """CTE ``kw``: the ``%(k)s`` items that best match the query's keywords.

    Keyword-only stores rank every match by ``ts_rank``. Hybrid stores look only for the
    query's rare lexemes (``terms.tq``) and take their matches level by level
    (``_KEYWORD_LEVELS``): the more rare lexemes an item holds, then the rarer, the better.
    That is ``ts_rank``'s order (it counts the matched lexemes) with its ties, mostly items
    holding one lexeme once, broken by rarity instead of at random. Ranking every match by
    ``ts_rank`` read each match's row (up to ~700 heap pages at 100k items, 1-5 ms); here the
    index finds each level's items, and rows are read only until ``%(k)s`` are found: the
    nested loop walks the levels in order (the order the LIMIT keeps) and stops there. Within
    a level, items come in the table's order. A query with more than ``MAX_LEVEL_LEXEMES`` rare
    lexemes (a long message) ranks by ``ts_rank``; one-time filters run only one branch.

    First, one scan for items holding any rare lexeme (``kw_every``), cut at ``%(k)s`` + 1,
    or at ``HELD_MATCHES * %(k)s`` + 1 when the lexemes' estimated rows add up to no more
    (``held_rows``): when it finds at most ``%(k)s``, they are every match, which is what the
    levels would return, and the levels never run (rare words often match fewer items than a
    page's candidates: one index scan instead of up to eight, and no levels built; ~0.5 ms of
    server CPU at 20k items). Up to its cut, they are still every match: the best ``%(k)s`` by
    level, then table order (``ctid``: the order each level's bitmap scan returns), are the
    levels' rows, taken without reading them again. Past that, the levels choose as above.
    The estimate only picks the cut; the rows are the levels' either way.
    """
    tq = "(SELECT tq FROM terms)"
    by_rank = f"""SELECT {columns} FROM {s}.store_items AS i
    WHERE i.search_tsv @@ {tq} AND {where}
    ORDER BY ts_rank(i.search_tsv, {tq}) DESC
    LIMIT %(k)s"""
    if not hybrid:
        return f"\nkw AS (\n    {by_rank}\n)"
    few = f"(SELECT count(*) <= {MAX_LEVEL_LEXEMES} FROM rq)"
    fits = "(SELECT count(*) <= %(k)s FROM kw_every)"
    held = "(SELECT count(*) <= (SELECT n FROM held_rows) FROM kw_every)"
    return f"""{_KEYWORD_LEVELS},
held_rows AS MATERIALIZED (
    SELECT CASE WHEN coalesce(sum(exp(-w)), 0) * %(st_rows)s <= {HELD_MATCHES} * %(k)s
                THEN {HELD_MATCHES} * %(k)s ELSE %(k)s END AS n
    FROM rq
),
kw_every AS MATERIALIZED (
    SELECT {columns}, i.ctid AS at FROM {s}.store_items AS i
    WHERE i.search_tsv @@ {tq} AND {where} LIMIT (SELECT n FROM held_rows) + 1
),
kw AS (
    SELECT {columns} FROM kw_every AS i WHERE {fits}
    UNION ALL
    (SELECT {columns} FROM kw_every AS i WHERE NOT {fits} AND {held} AND {few}
     ORDER BY {_LEVEL}, i.at
     LIMIT %(k)s)
    UNION ALL
    (SELECT i.* FROM (SELECT n, tq FROM levels
                      WHERE NOT {held} AND {few} ORDER BY n) AS lv
     CROSS JOIN LATERAL (
         SELECT {columns} FROM {s}.store_items AS i
         WHERE i.search_tsv @@ lv.tq AND {where} LIMIT %(k)s) AS i
     ORDER BY lv.n
     LIMIT %(k)s)
    UNION ALL
    ({by_rank.replace("WHERE ", f"WHERE NOT {fits} AND NOT {few} AND ", 1)})
)"""
