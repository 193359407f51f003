"""the_cat_api as tools for agents (``toolbench.kinds.curl_agent`` builds them from the docs).

One tool per documented endpoint. The world is the sample's account (favourites and votes)
for the whole episode; the answer is the last successful write, else the last successful call
(``curl_agent``'s rule), and it is judged with the world every call left behind, as a model's
curl line is judged with the world it left.
"""

from __future__ import annotations

import json

#: Doc file name -> tool name (what the call does).
TOOL_NAMES = {
    "images_search": "search_images",
    "image_by_id": "get_image",
    "breeds_list": "list_breeds",
    "breed_by_id": "get_breed",
    "breeds_search": "search_breeds",
    "categories_list": "list_categories",
    "favourites_list": "list_favourites",
    "favourite_get": "get_favourite",
    "favourite_add": "create_favourite",
    "favourite_delete": "delete_favourite",
    "votes_list": "list_votes",
    "vote_get": "get_vote",
    "vote_add": "create_vote",
    "vote_delete": "delete_vote",
}

_INTEGER = json.dumps({"type": "integer"})
_FLAG = json.dumps({"type": ["integer", "boolean"], "enum": [0, 1, True, False]})
#: Parameter name -> JSON Schema (as JSON text); the others are strings.
PARAM_TYPES = {
    "limit": _INTEGER,
    "page": _INTEGER,
    "value": _INTEGER,
    "has_breeds": _FLAG,
    "include_breeds": _FLAG,
    "include_categories": _FLAG,
}
