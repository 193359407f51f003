"""Which tests belong to which tier, in one place (``tests/conftest.py`` applies it).

* ``integration``: end-to-end runs through the CLI or ``toolbench.run``, real browsers, real
  servers on loopback, sandbox pools, Ray clusters and the real small model. Everything under
  ``tests/cli/`` is this tier (the CLI is driven end to end there), and so is every test marked
  ``slow`` or using the browser fixture; the files below are the rest.
* ``perf``: timing claims (how a parser's time grows with its input, how fast a server answers).
  Every ``test_*worst_case.py`` file is this tier, plus the tests named below and any test
  marked ``perf``. They are skipped unless asked for (``-m perf``, or ``TOOLBENCH_PERF=1``,
  which ``scripts/test`` sets under CI), and their budgets are built to hold on a loaded
  machine (``tests/perf.py``).
* The unit tier is everything else: ``scripts/test -m "not integration and not perf"``.

A file or test named here that no longer exists fails ``tests/test_tiers.py``, so a move
cannot drop a test into the wrong tier unnoticed.
"""

from __future__ import annotations

INTEGRATION_FOLDERS: tuple[str, ...] = ("tests/cli/",)

INTEGRATION_FILES: frozenset[str] = frozenset(
    {
        "tests/test_docs_commands.py",
        "tests/test_plugins_broken.py",
        "tests/agents/test_agent_containment.py",
        "tests/agents/test_mcp_server.py",
        "tests/agents/test_process_agent.py",
        "tests/agents/test_reference_agent.py",
        "tests/api/test_agent_world_plugin.py",
        "tests/api/test_third_party_task.py",
        "tests/aware/evaluate/test_cli_aware_run.py",
        "tests/aware/evaluate/test_generic_run.py",
        "tests/aware/evaluate/test_human.py",
        "tests/aware/evaluate/test_human_web.py",
        "tests/aware/evaluate/test_human_web_browser.py",
        "tests/aware/review/test_web.py",
        "tests/aware/review/test_web_browser.py",
        "tests/aware/review/test_web_concurrency.py",
        "tests/aware/test_cli_aware.py",
        "tests/aware/test_realshape_build.py",
        "tests/aware/test_stats.py",
        "tests/aware/test_task_twins.py",
        "tests/aware/test_utterance_removal.py",
        "tests/judge_validity/test_judge_validity.py",
        "tests/models/test_backend_agreement.py",
        "tests/models/reference/test_baseline_floors.py",
        "tests/models/reference/test_baseline_original_style.py",
        "tests/models/test_cache.py",
        "tests/models/test_endpoints.py",
        "tests/models/test_fakeserver.py",
        "tests/models/test_hf_chat_template.py",
        "tests/models/test_openai_compat.py",
        "tests/models/test_openai_listing.py",
        "tests/models/test_overflow.py",
        "tests/models/test_ray_replicas.py",
        "tests/models/test_retry.py",
        "tests/models/test_retry_breaker.py",
        "tests/models/test_smollm2.py",
        "tests/models/test_tools.py",
        "tests/report/test_aware_comparison.py",
        "tests/report/test_aware_html.py",
        "tests/report/test_checks.py",
        "tests/report/test_html_browser.py",
        "tests/report/test_html_readable.py",
        "tests/report/test_overflow_tokens.py",
        "tests/report/test_parts.py",
        "tests/report/test_rebuilt_prompts.py",
        "tests/report/test_reliability.py",
        "tests/report/test_streaming_report.py",
        "tests/report/test_tables.py",
        "tests/runner/test_breaker.py",
        "tests/runner/test_chain_key.py",
        "tests/runner/test_environment.py",
        "tests/runner/test_honest_fingerprint.py",
        "tests/runner/test_model_files.py",
        "tests/runner/test_one_folder_one_selection.py",
        "tests/runner/test_one_validation.py",
        "tests/runner/test_pinned_records.py",
        "tests/runner/test_ray_executor.py",
        "tests/runner/test_solve_loops.py",
        "tests/runner/test_store.py",
        "tests/sandbox/test_escaped.py",
        "tests/sandbox/test_host_calls.py",
        "tests/sandbox/test_hostile.py",
        "tests/sandbox/test_hostile_isolation.py",
        "tests/sandbox/test_hostile_pandas.py",
        "tests/sandbox/test_pool.py",
        "tests/sandbox/test_pool_async.py",
        "tests/sandbox/test_protocol.py",
        "tests/sandbox/test_valid.py",
        "tests/tasks/google_sheets/test_agent_world.py",
        "tests/tasks/google_sheets/test_data.py",
        "tests/tasks/google_sheets/test_live.py",
        "tests/tasks/google_sheets/test_task.py",
        "tests/tasks/open_weather/test_original_data.py",
        "tests/tasks/open_weather/test_serve_key.py",
        "tests/tasks/tabletop/test_agent_world.py",
        "tests/tasks/tabletop/test_check_ties.py",
        "tests/tasks/tabletop/test_lmp.py",
        "tests/tasks/tabletop/test_task.py",
        "tests/tasks/tabletop/test_world.py",
        "tests/tasks/test_equivalence.py",
        "tests/kinds/test_http_hostile.py",
        "tests/tasks/test_http_serve_hostile.py",
        "tests/kinds/test_tool_calling.py",
        "tests/tasks/the_cat_api/test_judging.py",
        "tests/tasks/the_cat_api/test_original_votes.py",
        "tests/kinds/tool_calling/test_program_agent_worlds.py",
        "tests/tasks/virtual_home/test_hostile_replies.py",
        "tests/tasks/virtual_home/test_task.py",
        "tests/tasks/web_shop/test_human.py",
        "tests/tasks/web_shop/test_task.py",
        "tests/tasks/web_shop/test_web_api.py",
        "tests/tasks/web_shop/test_web_browser.py",
        "tests/tasks/web_shop/test_web_origin.py",
    }
)

PERF_FILE_SUFFIX = "worst_case.py"

PERF_TESTS: frozenset[str] = frozenset(
    {
        # Grounding and a world run timed on hostile shapes at 100 KB and 1 MB.
        "tests/tasks/virtual_home/test_hostile_replies.py::"
        "test_grounding_and_the_world_run_are_linear_on_worst_case_shapes",
    }
)
