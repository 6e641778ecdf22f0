"""The timestamps a memory's end time may hold, as Python and Postgres read them alike, and
``end_time``, the SQL function that reads one (store/0011's indexes order by it).

:data:`ISO_TIME` admits only the timestamps that Python's ``datetime.fromisoformat`` and
Postgres' ``timestamptz`` read alike (no hour 24, no leap second, at most 6 fractional
digits, offsets Postgres takes); ``pg_input_is_valid`` / ``fromisoformat`` then reject the
same impossible dates (store/_labels.py reads it in both languages).

>>> import re
>>> bool(re.match(ISO_TIME, "2026-01-01T10:00:00+02:00")), bool(re.match(ISO_TIME, "soon"))
(True, False)
"""

from __future__ import annotations

__all__ = ["END_TIME_FUNCTION", "HAS_OFFSET", "ISO_TIME"]

_TWO = "[0-9]{2}"
_TIME = "([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?"
_OFFSET = "(Z|[+-](0[0-9]|1[0-5]):[0-5][0-9])"
#: the timestamps ``Past`` reads: ISO 8601 calendar dates, with a time and an offset or not
ISO_TIME = f"^[1-9][0-9]{{3}}-{_TWO}-{_TWO}([T ]{_TIME}{_OFFSET}?)?$"
#: a timestamp that names its offset (else it is UTC)
HAS_OFFSET = f"{_OFFSET}$"

_TEXT = "(at #>> '{}')"
#: ``{schema}.end_time(jsonb)``: the timestamp a JSON value holds as :data:`ISO_TIME` allows
#: (no offset: UTC), else NULL. IMMUTABLE, for an index: the cast reads the session's
#: TimeZone only for a text without an offset, which is read as UTC here, and an ISO date
#: reads the same in every DateStyle.
END_TIME_FUNCTION = f"""CREATE OR REPLACE FUNCTION {{schema}}.end_time(at jsonb)
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(at) = 'string' AND {_TEXT} ~ '{ISO_TIME}'
                     AND pg_input_is_valid({_TEXT}, 'timestamptz')
           THEN CASE WHEN {_TEXT} ~ '{HAS_OFFSET}' THEN {_TEXT}::timestamptz
                     ELSE {_TEXT}::timestamp AT TIME ZONE 'UTC' END END
$$"""
