"""Studio entry point: the memory graph with extraction in the background, on the durable
Postgres job queue.

The extract node only enqueues a job (in the same transaction as its per-thread watermark)
and returns, so the turn ends without waiting for extraction; a worker task running in the
server process picks the job up after a short debounce (a second, so a quick follow-up turn
merges into the same job), extracts, redacts and reconciles into the server's store. Watch the
fact appear in the memory view (or ``/store/items/search``) a moment after the run ends.

The queue shares the server store's pool and schema (``langmem_vault.studio.job_queue``;
``$LANGMEM_VAULT_DSN``, else the embedded server). Models as in ``memory_graph.py``.
"""

from langmem_vault import ExtractOptions, build_memory_graph
from langmem_vault.studio import close_on_shutdown, job_queue, studio_models, warm_up

models = studio_models()
warm_up(models)

graph = build_memory_graph(
    models.chat,
    extractor=models.extractor,
    summarizer=models.summarizer,
    queue=job_queue(),  # the extract node starts its worker task on the first run
    extract_options=ExtractOptions(every_n_messages=2, debounce_seconds=1.0),
    name="background_extraction",
)
close_on_shutdown(graph)  # stop the worker before the server's pools close
