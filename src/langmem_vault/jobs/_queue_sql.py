"""The job queue's SQL, as named constants (``{schema}`` is filled in by
``db._migrations.in_schema``); jobs/_plans.py runs them and parses their rows."""

# The enqueue sits on the chat path, so it takes three statements. (Sending the first two
# together in pipeline mode, BEGIN included, measured slower on the loaded 2-core machine:
# bench/roundtrip_bench.py, RESULTS.md.) The first skips waiting for the WAL flush (a few ms
# per commit): if the server crashes before the flush, the job and the watermark are lost
# together and the next turn enqueues the same messages again, so nothing is skipped. It also
# takes a per-thread lock so two concurrent runs of one thread never both see the same
# messages as new; the next statement's snapshot is taken after the lock is held.
LOCK_THREAD = """
SELECT set_config('synchronous_commit', 'off', true),
       pg_advisory_xact_lock(hashtextextended(%s, 0))
"""

# The watermark, and a job of the thread that no worker has touched yet (it absorbs the new
# span: one LLM call for a burst of turns; this is the debounce).
READ_THREAD = """
SELECT w.message_ids, j.id AS waiting_id, j.first_id, j.waiting_count
FROM (SELECT 1) AS one
LEFT JOIN {schema}.vault_job_watermarks AS w
       ON w.kind = %(kind)s AND w.thread_id = %(thread)s
LEFT JOIN LATERAL (
    SELECT id, payload->'message_ids'->>0 AS first_id,
           jsonb_array_length(coalesce(payload->'message_ids', '[]'::jsonb)) AS waiting_count
    FROM {schema}.vault_jobs
    WHERE kind = %(kind)s AND thread_id = %(thread)s AND status = 'pending' AND attempts = 0
    ORDER BY id DESC LIMIT 1
) AS j ON true
"""

SET_WATERMARK_CTE = """
mark AS (
    INSERT INTO {schema}.vault_job_watermarks (kind, thread_id, message_ids, updated_at)
    VALUES (%(kind)s, %(thread)s, %(present)s, now())
    ON CONFLICT (kind, thread_id)
    DO UPDATE SET message_ids = EXCLUDED.message_ids, updated_at = now()
)
"""

# Lists are appended in SQL, so a long waiting span never travels back to the client. The
# status check runs again after any row lock wait: a job a worker claimed meanwhile is left
# alone (no row comes back) and a new job is inserted instead.
MERGE_WAITING = (
    """
WITH merged AS (
    UPDATE {schema}.vault_jobs
    SET payload = %(new)s::jsonb || jsonb_build_object(
            'messages',
            coalesce(payload->'messages', '[]'::jsonb) || (%(new)s::jsonb->'messages'),
            'message_ids',
            coalesce(payload->'message_ids', '[]'::jsonb) || (%(new)s::jsonb->'message_ids')),
        dedupe_key = %(key)s, run_after = now() + make_interval(secs => %(delay)s),
        updated_at = now()
    WHERE id = %(id)s AND status = 'pending' AND attempts = 0
    RETURNING id
), """
    + SET_WATERMARK_CTE
    + "SELECT id FROM merged"
)

# ON CONFLICT: the same span was enqueued before (idempotent) and the second SELECT finds it;
# it cannot see a row this statement inserted, so exactly one id comes back.
INSERT_JOB = (
    """
WITH inserted AS (
    INSERT INTO {schema}.vault_jobs
        (kind, dedupe_key, thread_id, payload, max_attempts, run_after)
    VALUES (%(kind)s, %(key)s, %(thread)s, %(new)s, %(max_attempts)s,
            now() + make_interval(secs => %(delay)s))
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id
), """
    + SET_WATERMARK_CTE
    + """
SELECT id FROM inserted
UNION ALL
SELECT id FROM {schema}.vault_jobs WHERE dedupe_key = %(key)s
"""
)

# Jobs whose lease expired with no attempts left are failed, not retried forever.
EXHAUST = """
UPDATE {schema}.vault_jobs
SET status = 'failed', lease_token = NULL, leased_until = NULL, finished_at = now(),
    updated_at = now(), last_error = coalesce(last_error, 'lease expired')
WHERE kind = ANY(%s) AND status = 'running' AND leased_until < now()
  AND attempts >= max_attempts
"""

# A job is ready when it is pending and due, or running on a lease that has expired.
READY = """kind = ANY(%s) AND attempts < max_attempts
      AND ((status = 'pending' AND run_after <= now())
           OR (status = 'running' AND leased_until < now()))"""

# Leases the rows of the statement's ``next`` (parameters: lease seconds, worker id).
TAKE = """
UPDATE {schema}.vault_jobs AS j
SET status = 'running', attempts = j.attempts + 1, lease_token = gen_random_uuid(),
    leased_until = now() + make_interval(secs => %s), worker_id = %s, updated_at = now()
FROM next WHERE j.id = next.id
RETURNING j.*
"""

CLAIM = (
    """
WITH next AS (
    SELECT id FROM {schema}.vault_jobs
    WHERE """
    + READY
    + """
    ORDER BY run_after, id
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)"""
    + TAKE
)

# The same claim, one job per thread at a time: a thread whose job is running on a live lease
# is passed over, and of a thread's ready jobs only the first is taken. Run after LOCK_CLAIMS,
# so its snapshot sees every claim made before it (two claimers can't both find a thread idle).
CLAIM_ONE_PER_THREAD = (
    """
WITH ready AS (
    SELECT DISTINCT ON (thread_id) id, run_after FROM {schema}.vault_jobs AS j
    WHERE """
    + READY
    + """
      AND NOT EXISTS (
          SELECT 1 FROM {schema}.vault_jobs AS r
          WHERE r.kind = j.kind AND r.thread_id = j.thread_id AND r.id <> j.id
            AND r.status = 'running' AND r.leased_until >= now())
    ORDER BY thread_id, run_after, id
), next AS (
    SELECT id FROM {schema}.vault_jobs
    WHERE id IN (SELECT id FROM ready)
    ORDER BY run_after, id
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)"""
    + TAKE
)

# Claims of the same kinds take turns (held to the end of the claim's transaction).
LOCK_CLAIMS = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"

RENEW = """
UPDATE {schema}.vault_jobs
SET leased_until = clock_timestamp() + make_interval(secs => %s), updated_at = now()
WHERE id = %s AND lease_token = %s AND status = 'running'
RETURNING id
"""

SAVE_RESULT = """
UPDATE {schema}.vault_jobs SET result = %s, updated_at = now()
WHERE id = %s AND lease_token = %s AND status = 'running'
RETURNING id
"""

COMPLETE = """
UPDATE {schema}.vault_jobs
SET status = 'done', lease_token = NULL, leased_until = NULL, finished_at = now(),
    updated_at = now()
WHERE id = %s AND lease_token = %s AND status = 'running'
RETURNING id
"""

# A failed attempt goes back to pending after a backoff, or to failed when none are left.
FAIL = """
UPDATE {schema}.vault_jobs
SET status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN now() END,
    last_error = %s, lease_token = NULL, leased_until = NULL,
    run_after = now() + make_interval(secs => %s), updated_at = now()
WHERE id = %s AND lease_token = %s AND status = 'running'
RETURNING status
"""

GET = "SELECT * FROM {schema}.vault_jobs WHERE id = %s"

LIST = """
SELECT * FROM {schema}.vault_jobs
WHERE (%s::text IS NULL OR thread_id = %s) AND (%s::text IS NULL OR status = %s)
ORDER BY id
"""

PURGE = """
DELETE FROM {schema}.vault_jobs
WHERE status IN ('done', 'failed') AND finished_at < now() - make_interval(secs => %s)
  AND (%s OR status = 'done')
"""

# Erasing a user: their threads' jobs, and jobs of other threads whose payload writes into the
# user's namespaces (a thread the per-user index does not know); then those threads' watermarks.
DELETE_USER_JOBS = """
WITH d AS (
    DELETE FROM {schema}.vault_jobs
    WHERE thread_id = ANY(%(threads)s)
       OR payload -> 'namespaces' -> 'semantic' = %(semantic)s
       OR payload -> 'namespaces' -> 'episodes' = %(episodes)s
       OR payload -> 'namespaces' -> 'instructions' = %(instructions)s
    RETURNING thread_id
), w AS (
    DELETE FROM {schema}.vault_job_watermarks
    WHERE thread_id = ANY(%(threads)s) OR thread_id IN (SELECT thread_id FROM d)
    RETURNING 1
)
SELECT (SELECT count(*) FROM d) AS jobs, (SELECT count(*) FROM w) AS watermarks
"""

# A job that is not a span of a thread (a scheduled consolidation): idempotent per dedupe_key,
# so scheduling the same slot twice keeps one job; the id of the existing one comes back.
INSERT_KEYED = """
WITH inserted AS (
    INSERT INTO {schema}.vault_jobs (kind, dedupe_key, thread_id, payload, max_attempts, run_after)
    VALUES (%(kind)s, %(key)s, %(thread)s, %(payload)s, %(max_attempts)s,
            now() + make_interval(secs => %(delay)s))
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id, true AS created
)
SELECT id, created FROM inserted
UNION ALL
SELECT id, false FROM {schema}.vault_jobs WHERE dedupe_key = %(key)s
"""

# A new thread of a user: that user's idle tails (see ``idle_seconds``) run now, not later.
PROMOTE_TAILS = """
UPDATE {schema}.vault_jobs
SET run_after = now(), updated_at = now()
WHERE kind = %(kind)s AND status = 'pending' AND attempts = 0 AND run_after > now()
  AND thread_id <> %(thread)s AND payload -> 'namespaces' -> 'semantic' = %(semantic)s
RETURNING id
"""

STATUSES = "SELECT id, status FROM {schema}.vault_jobs WHERE id = ANY(%s)"

COUNTS = "SELECT status, count(*) AS n FROM {schema}.vault_jobs GROUP BY status"
