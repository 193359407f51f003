"""Phrasing pools for the_cat_api generator: how people ask for each endpoint and parameter.

Templates put slot keys in braces (``{image_id}``); ``_pools.fill`` turns them into pieces so
the generator knows the exact query substring behind every gold value. Every template starts
with frame text, because ``render`` capitalises the first piece.
"""

from __future__ import annotations

# Names people use for the file types; the first is the most common.
MIME_WORDS = {
    "gif": ("gifs", "GIFs", "animated gifs", "gif files"),
    "png": ("pngs", "PNG images", "png files", "PNGs"),
    "jpg": ("jpgs", "JPEGs", "jpeg files", "JPG images"),
}
MIME_CLAUSE = ("only {mime_types}", "as {mime_types} only", "{mime_types} only")

# Category id -> ways to say "cats in that category" (after the noun).
CATEGORY_WORDS = {
    1: ("wearing hats", "in hats", "with hats on"),
    2: ("in space", "floating in space", "in outer space"),
    4: ("wearing sunglasses", "in sunglasses", "with shades on"),
    5: ("in boxes", "sitting in boxes", "in cardboard boxes"),
    7: ("wearing ties", "in neckties", "with ties on"),
    14: ("in sinks", "sitting in sinks", "in the sink"),
    15: ("wearing clothes", "dressed in clothes", "in little outfits"),
}

ORDER_WORDS = {
    "DESC": ("newest first", "most recent uploads first", "in descending order", "sorted DESC"),
    "ASC": ("oldest first", "in ascending order", "earliest uploads first", "sorted ASC"),
    "RANDOM": ("in random order", "shuffled randomly", "in a random order"),
}
HAS_BREEDS = (
    "with breed info included",
    "with breed data attached",
    "only ones with a known breed",
)
SIZE_WORDS = {
    "thumb": ("thumbnail size", "as thumbnails", "thumbnail-sized"),
    "small": ("small size", "in a small size"),
    "med": ("medium size", "medium-sized"),
    "full": ("full size", "at full size"),
}
NO_BREED_DETAILS = ("without the breed details", "leave out the breed info")

SEARCH_OPEN = (
    "Show me", "Find", "Get me", "Can you find", "I'd like", "Fetch", "Search for", "Pull up",
    "Send me", "Look for", "I want", "Please get", "Could you show me", "Grab",
)  # fmt: skip
# (what follows, one or many) -> nouns: a breed clause follows a bare noun, a category clause
# follows "cats", and with neither the noun stands alone.
SEARCH_NOUNS = {
    ("breed", False): ("a picture", "a photo", "an image", "a pic"),
    ("breed", True): ("pictures", "photos", "images", "pics"),
    ("category", False): ("a picture of a cat", "a cat", "a photo of a cat", "an image of a cat"),
    ("category", True): ("pictures of cats", "cats", "photos of cats", "images of cats"),
    ("none", False): ("a cat picture", "a cat photo", "a picture of a cat", "an image of a cat"),
    ("none", True): ("cat pictures", "cat photos", "pictures of cats", "cat images", "cat pics"),
}
# Breed clauses after a noun: {breed_ids} is a joined list of names or ids.
BREED_CLAUSE_NAMES = (
    "of {breed_ids} cats", "showing {breed_ids} cats", "from the {breed_ids} breed",
    "of the {breed_ids} breed", "of {breed_ids} kitties",
)  # fmt: skip
BREED_CLAUSE_IDS = (
    "from the {breed_ids} breed",
    "with breed id {breed_ids}",
    "for breeds {breed_ids}",
)

IMAGE_BY_ID = (
    "Get the details of image {image_id}",
    "What breed is the cat in picture {image_id}?",
    "Show me the image with id {image_id}.",
    "Look up the cat photo with id {image_id}",
    "I have an image id, {image_id}. What's its url?",
    "How big is image {image_id}?",
    "Give me info on cat image {image_id}.",
)

BREEDS_ALL = (
    "List all cat breeds.", "What cat breeds do you know?", "Give me the full list of breeds",
    "Show every breed in the database", "Which breeds are available?", "Get all the cat breeds",
)  # fmt: skip
BREEDS_LIMIT = (
    "List the first {limit} breeds.",
    "Show me {limit} cat breeds",
    "Give me {limit} breeds",
)
BREEDS_PAGE = (
    "Show the {page} page of breeds, {limit} per page.",
    "Breeds list: {limit} per page, I want the {page} page",
    "With {limit} breeds per page, what's on the {page} page?",
)

BREED_INFO = (
    "Tell me about the {breed_id} breed.",
    "What's the temperament of the {breed_id}?",
    "Where does the {breed_id} come from?",
    "Give me breed info for {breed_id}",
    "How much does a {breed_id} weigh?",
    "Look up the {breed_id} cat breed",
    "I'm thinking of adopting a {breed_id}. What are they like?",
)
BREED_INFO_PLURAL = ("How long do {breed_id}{s} live?", "What are {breed_id}{s} like as pets?")

BREED_SEARCH = (
    "Search the breeds for '{q}'",
    "Which breeds have '{q}' in their name?",
    "Find breeds with names containing {q}",
    "Are there any breeds called something like {q}?",
    'Look up breeds matching "{q}"',
)
BREED_SEARCH_WORDS = (
    "rex", "shorthair", "bobtail", "american", "turkish", "burm", "british", "mau", "longhair",
    "curl", "blue", "fold", "forest", "oriental", "japanese", "exotic", "angora", "siam",
    "tiffany", "spangled", "wirehair", "coon", "persian", "bengal", "van",
)  # fmt: skip

CATEGORIES = (
    "What categories of cat images are there?", "List the image categories",
    "Show me all categories", "Which categories can I filter pictures by?",
    "Get the list of picture categories.", "What category ids exist?",
)  # fmt: skip

FAV_WORD = ("favourites", "favorites", "faves")
FAVS_ALL = (
    "List my {fav}.", "Show my {fav}", "What have I saved to my {fav}?",
    "Get all my {fav}", "Which cat pictures are in my {fav}?",
)  # fmt: skip
FAVS_SUB = ("Show the {fav} saved under {sub_id}", "List {fav} for sub id {sub_id}",
            "What's in the {fav} of user {sub_id}?")  # fmt: skip
FAVS_RECENT = ("Show my {limit} {order} {fav}", "List the {limit} {order} {fav}")
RECENT_WORDS = ("most recent", "latest", "newest")

FAV_GET = (
    "Show favourite {favourite_id}", "Get the details of my favorite with id {favourite_id}",
    "Which image is favourite #{favourite_id}?", "Look up favorite number {favourite_id}",
)  # fmt: skip
FAV_ADD = (
    "Add image {image_id} to my {fav}", "Favourite the picture {image_id}",
    "Save cat image {image_id} as a favorite", "Mark photo {image_id} as a favourite",
    "Put the cat pic {image_id} in my {fav}", "Please save {image_id} to {fav}",
)  # fmt: skip
FAV_ADD_SUB = ("for user {sub_id}", "under sub id {sub_id}", "in {sub_id}'s list")
FAV_DELETE = (
    "Remove favourite {favourite_id}", "Delete my favorite with id {favourite_id}",
    "Delete favourite number {favourite_id} from my list",
    "Take favorite #{favourite_id} off my {fav}", "Get rid of favourite {favourite_id}",
)  # fmt: skip
FAV_DELETE_IMAGE = (
    "Remove favourite {favourite_id}, the one for image {image}",
    "Unsave favorite {favourite_id} (that's picture {image})",
)

VOTES_ALL = ("Show my votes", "List all the votes I've cast.", "What have I voted on?",
             "Get my image votes")  # fmt: skip
VOTES_SUB = ("Show the votes cast by {sub_id}", "List votes for sub id {sub_id}")
VOTES_RECENT = ("Show my {limit} {order} votes", "List the {limit} {order} votes")
VOTE_GET = ("Show vote {vote_id}", "Get the details of vote #{vote_id}",
            "Look up my vote with id {vote_id}")  # fmt: skip
# Vote value -> verbs ("please {value} image X") and nouns ("give a {value} to image X"). A
# down-vote is -1, as in the original test set; the pools keep their sizes so that the seeded
# draws (and with them every other record) stay where they were.
VOTE_VERB = {1: ("upvote", "vote up", "like"), -1: ("downvote", "vote down", "dislike")}
VOTE_NOUN = {1: ("thumbs up", "positive vote"), -1: ("thumbs down", "negative vote")}
VOTE_ADD_VERB = (
    "Please {value} image {image_id}", "I want to {value} cat photo {image_id}",
    "{value} the picture with id {image_id}.", "Can you {value} the picture {image_id}?",
)  # fmt: skip
VOTE_ADD_NOUN = ("Give a {value} to the picture {image_id}",
                 "I think image {image_id} has earned a {value}.",
                 "Record a {value} for image {image_id}")  # fmt: skip
VOTE_ADD_SUB = ("as user {sub_id}", "with sub id {sub_id}")
VOTE_DELETE = ("Delete vote {vote_id}", "Remove my vote {vote_id}", "Undo vote number {vote_id}",
               "Cancel the vote with id {vote_id}")  # fmt: skip

SUB_IDS = (
    "user-42", "alice", "maya_k", "bob.smith", "household-2", "guest", "tester01", "jordan",
    "catlover88", "team-blue", "kid-room", "office",
)  # fmt: skip
