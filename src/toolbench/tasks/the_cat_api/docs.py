"""API docs and demonstrations for the_cat_api, written for this project.

``FUNCTIONS`` holds one doc per endpoint: a '# ...' line saying what the request does, the curl
line with ``{placeholders}``, and for endpoints with query parameters a 'Parameters:' block.
``EXAMPLES`` are (query, gold curl line) demonstrations that together use every endpoint.
"""

from __future__ import annotations

BASE = "https://api.thecatapi.com/v1"

FUNCTIONS: dict[str, str] = {
    "images_search": (
        "# Search cat pictures. Every parameter is optional; combine as many as needed.\n"
        f"curl -X GET '{BASE}/images/search?limit={{limit}}&breed_ids={{breed_ids}}"
        "&mime_types={mime_types}&order={order}'\n"
        "Parameters:\n"
        "  limit: how many images to return, 1 to 100 (default 1)\n"
        "  page: 0-based page of results, used with limit and order ASC or DESC\n"
        "  order: ASC (oldest uploads first), DESC (newest first) or RANDOM (default)\n"
        "  breed_ids: comma-separated breed ids, e.g. beng,siam (see breeds_list; 'breeds' is "
        "an alias)\n"
        "  category_ids: comma-separated category ids: 1 hats, 2 space, 4 sunglasses, 5 boxes, "
        "7 ties, 14 sinks, 15 clothes\n"
        "  mime_types: comma-separated file types among jpg, png, gif\n"
        "  has_breeds: 1 to return only images that carry breed information\n"
        "  size: full, med (default), small or thumb: the width and height reported\n"
        "  include_breeds / include_categories: 0 to leave breed or category details out"
    ),
    "image_by_id": (
        "# Get one cat image (url, size, breed and categories) by its image id.\n"
        f"curl -X GET '{BASE}/images/{{image_id}}'"
    ),
    "breeds_list": (
        "# List cat breeds with their ids, origin, temperament, life span and weight.\n"
        f"curl -X GET '{BASE}/breeds?limit={{limit}}&page={{page}}'\n"
        "Parameters:\n"
        "  limit: how many breeds per page (default: all of them)\n"
        "  page: 0-based page number"
    ),
    "breed_by_id": (
        "# Get the details of one breed by its 4-letter breed id, e.g. mcoo for Maine Coon.\n"
        f"curl -X GET '{BASE}/breeds/{{breed_id}}'"
    ),
    "breeds_search": (
        "# Find breeds whose name contains a word (case-insensitive).\n"
        f"curl -X GET '{BASE}/breeds/search?q={{name}}'"
    ),
    "categories_list": (
        "# List the image categories (hats, space, sunglasses, boxes, ties, sinks, clothes) and "
        "their ids.\n"
        f"curl -X GET '{BASE}/categories'"
    ),
    "favourites_list": (
        "# List the images saved as favourites, optionally only those saved under a sub_id.\n"
        f"curl -X GET '{BASE}/favourites?sub_id={{sub_id}}'\n"
        "Parameters:\n"
        "  sub_id: only favourites saved with this sub_id\n"
        "  limit, page: page through the list (page is 0-based)\n"
        "  order: ASC (oldest first, default) or DESC"
    ),
    "favourite_get": (
        "# Get one saved favourite by its favourite id.\n"
        f"curl -X GET '{BASE}/favourites/{{favourite_id}}'"
    ),
    "favourite_add": (
        '# Save the image with id {image_id} as a favourite; add "sub_id" to the body to file '
        "it under a user or list name. The response gives the new favourite id.\n"
        f"curl -X POST '{BASE}/favourites' --data '{{\"image_id\":\"{{image_id}}\"}}'"
    ),
    "favourite_delete": (
        "# Remove the favourite with id {favourite_id} from the favourites.\n"
        f"curl -X DELETE '{BASE}/favourites/{{favourite_id}}'"
    ),
    "votes_list": (
        "# List the votes cast on images, optionally only those cast under a sub_id.\n"
        f"curl -X GET '{BASE}/votes?sub_id={{sub_id}}'\n"
        "Parameters:\n"
        "  sub_id: only votes cast with this sub_id\n"
        "  limit, page: page through the list (page is 0-based)\n"
        "  order: ASC (oldest first, default) or DESC"
    ),
    "vote_get": (f"# Get one vote by its vote id.\ncurl -X GET '{BASE}/votes/{{vote_id}}'"),
    "vote_add": (
        "# Vote on the image with id {image_id}: value 1 is an up-vote (like, thumbs up, a "
        "positive vote), value -1 a down-vote (dislike, thumbs down, a negative vote). 0 is "
        "also accepted and kept as a vote of 0, which is not a down-vote; any other value is "
        'refused. "sub_id" in the body is optional.\n'
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"{{image_id}}", "value":{{value}}}}\''
    ),
    "vote_delete": (
        f"# Delete the vote with id {{vote_id}}.\ncurl -X DELETE '{BASE}/votes/{{vote_id}}'"
    ),
}

EXAMPLES: list[tuple[str, str]] = [
    (
        "Show me 4 pictures of Bengal or Siamese cats.",
        f"curl -X GET '{BASE}/images/search?limit=4&breed_ids=beng,siam'",
    ),
    (
        "I want three animated gifs of cats wearing hats, newest first.",
        f"curl -X GET '{BASE}/images/search?limit=3&category_ids=1&mime_types=gif&order=DESC'",
    ),
    (
        "Fetch the second page of Maine Coon photos, 10 per page, oldest first.",
        f"curl -X GET '{BASE}/images/search?limit=10&page=1&breed_ids=mcoo&order=ASC'",
    ),
    (
        "Give me a random png cat picture that comes with breed details, thumbnail size.",
        f"curl -X GET '{BASE}/images/search?mime_types=png&has_breeds=1&size=thumb'",
    ),
    (
        "What do you know about the picture with id iHQS6HNQr?",
        f"curl -X GET '{BASE}/images/iHQS6HNQr'",
    ),
    ("List every cat breed you have.", f"curl -X GET '{BASE}/breeds'"),
    (
        "Show the third page of the breed list with 5 breeds per page.",
        f"curl -X GET '{BASE}/breeds?limit=5&page=2'",
    ),
    ("Tell me about the Norwegian Forest Cat.", f"curl -X GET '{BASE}/breeds/norw'"),
    (
        "Which breeds have 'shorthair' in their name?",
        f"curl -X GET '{BASE}/breeds/search?q=shorthair'",
    ),
    ("What image categories can I pick from?", f"curl -X GET '{BASE}/categories'"),
    ("Show me everything I've favourited.", f"curl -X GET '{BASE}/favourites'"),
    (
        "List the favourites saved for user kitty-fan-7.",
        f"curl -X GET '{BASE}/favourites?sub_id=kitty-fan-7'",
    ),
    ("Pull up favourite number 48213.", f"curl -X GET '{BASE}/favourites/48213'"),
    (
        "Save image sb0 to my favourites.",
        f"curl -X POST '{BASE}/favourites' --data '{{\"image_id\":\"sb0\"}}'",
    ),
    (
        "Add picture OIppUw4fY to the favourites of sub account maya.",
        f"curl -X POST '{BASE}/favourites' "
        """--data '{"image_id":"OIppUw4fY", "sub_id":"maya"}'""",
    ),
    ("Remove favourite 7719 from my list.", f"curl -X DELETE '{BASE}/favourites/7719'"),
    ("How have I voted so far?", f"curl -X GET '{BASE}/votes'"),
    ("Look up vote 530012.", f"curl -X GET '{BASE}/votes/530012'"),
    (
        "Thumbs down for image svd.",
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"svd", "value":-1}}\'',
    ),
    (
        "In my opinion picture 8rFqW2xLz has earned a negative vote.",
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"8rFqW2xLz", "value":-1}}\'',
    ),
    (
        "I love the cat in image qe49DOFNx, upvote it please.",
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"qe49DOFNx", "value":1}}\'',
    ),
    ("Take back my vote with id 530019.", f"curl -X DELETE '{BASE}/votes/530019'"),
]
