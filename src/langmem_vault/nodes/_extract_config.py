"""What the extract node reads from a run's config: the thread its watermark belongs to, and
when the run's messages were said."""

from __future__ import annotations

from datetime import UTC, datetime

from langchain_core.runnables import RunnableConfig

from langmem_vault._run_config import RunConfigError, config_value
from langmem_vault.extraction._messages import parse_time

__all__ = ["OBSERVED_AT_KEY", "MissingThreadIdError", "ObservedAtError"]


class MissingThreadIdError(RunConfigError, KeyError):
    """The run has no ``thread_id``: the watermark has no thread to belong to."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


def thread_id_of(config: RunnableConfig) -> str:
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not thread_id:
        raise MissingThreadIdError(
            "extract needs config['configurable']['thread_id'] to keep its per-thread "
            "watermark; compile the graph with a checkpointer and pass a thread_id"
        )
    return str(thread_id)


#: config["configurable"] (or run context) key: when the run's messages were said (a
#: datetime or an ISO string; an imported conversation's session date), for the messages
#: that carry no time of their own
OBSERVED_AT_KEY = "observed_at"


class ObservedAtError(RunConfigError, ValueError):
    """A session date in the run config that is no time."""


def session_time(config: RunnableConfig) -> datetime:
    value = config_value(OBSERVED_AT_KEY, config)
    if value is None:
        return datetime.now(UTC)
    said = parse_time(value)
    if said is None:
        raise ObservedAtError(
            f"{OBSERVED_AT_KEY}: expected a datetime or an ISO date, got {value!r}"
        )
    return said
