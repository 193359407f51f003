"""The the_cat_api task object (imported on first use of ``toolbench.tasks.the_cat_api.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.kinds.curl_task import CurlTask
from toolbench.tasks.the_cat_api import docs, generator
from toolbench.tasks.the_cat_api.agent_world import PARAM_TYPES, TOOL_NAMES
from toolbench.tasks.the_cat_api.derive import derive_state
from toolbench.tasks.the_cat_api.service import SERVICE

TASK = CurlTask(
    name="the_cat_api",
    summary="a curl request to The Cat API (image search, breeds, favourites, votes)",
    service=SERVICE,
    package_dir=Path(__file__).parent,
    live_key_env="THE_CAT_API_KEY",
    live_key_header="x-api-key",
    drop_keys=("id",),
    derive_state=derive_state,
    same_endpoint=True,
    defaults=TaskDefaults(top_k_api=3, top_k_example=3, max_tokens=128),
    generator=TaskGenerator.of(generator, docs),
    tool_names=TOOL_NAMES,
    param_types=PARAM_TYPES,
)
