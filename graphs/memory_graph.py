"""Studio entry point: the reference memory graph, inject -> respond -> extract -> reconcile
-> compact (``build_memory_graph``).

Offline by default (an offline model answering from the injected memories, the offline
extractor); ``LANGMEM_VAULT_MODEL="provider:model"`` or ``OPENAI_API_KEY`` runs a real model
(see :mod:`langmem_vault.studio`). Extraction runs inline after every turn, so what a turn
taught shows up in the store (and in the next thread's ``memory_context``) at once. The graph
has no store or checkpointer of its own: the server's are VaultStore and VaultSaver
(``langgraph.json``).
"""

from langmem_vault import ExtractOptions, build_memory_graph
from langmem_vault.studio import studio_models, warm_up

models = studio_models()
warm_up(models)  # the server imports this module in a worker thread: loads off the loop

graph = build_memory_graph(
    models.chat,
    extractor=models.extractor,
    summarizer=models.summarizer,
    extract_options=ExtractOptions(every_n_messages=2),  # one user turn + one answer
    name="memory_graph",
)
