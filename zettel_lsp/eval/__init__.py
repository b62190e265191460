"""Evaluation: judged queries (golden sets, BEIR collections), link hold-out, IR metrics.

Above search and the vault: nothing under ``search/``, ``index/`` or ``server/`` imports it."""
