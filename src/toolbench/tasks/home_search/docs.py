"""API docs and demonstrations for home_search, written for this project.

``FUNCTIONS`` holds one doc per public method of ``HomeSearchAPI`` (file name = method name):
a '# ...' line saying what the call does, its allowed values and call-order rules, then the
signature. Allowed string values are quoted so that tools (and the baseline model) can read
them. ``EXAMPLES`` are (query, gold program) demonstrations that together use every call,
both 'buy' and 'rent', and every home type.
"""

from __future__ import annotations

FUNCTIONS: dict[str, str] = {
    "set_location": (
        "# Choose the city or area to search in. This must be the very first call, before the "
        "buy/rent choice and every other criterion.\n"
        "API.set_location(value: str)"
    ),
    "set_buy_or_rent": (
        "# Say whether the homes are to 'buy' or to 'rent'. Call it right after set_location "
        "and before any other criterion.\n"
        "API.set_buy_or_rent(value: str)"
    ),
    "select_home_type": (
        "# Limit the search to one or more home types. When buying, choose from 'House', "
        "'Townhouse', 'Condo', 'Land', 'Multi-family', 'Mobile', 'Co-op'; when renting, from "
        "'House', 'Townhouse', 'Condo', 'Apartment'. Call it after set_buy_or_rent.\n"
        "API.select_home_type(home_types: List[str])"
    ),
    "set_min_price": (
        "# Lowest acceptable price in US dollars: the sale price when buying, the monthly rent "
        "when renting. Call it after set_buy_or_rent.\n"
        "API.set_min_price(value: int)"
    ),
    "set_max_price": (
        "# Highest acceptable price in US dollars (sale price, or monthly rent when renting). "
        "Call it after set_buy_or_rent.\n"
        "API.set_max_price(value: int)"
    ),
    "set_min_square_feet": (
        "# Smallest acceptable living area, in square feet. Call it after set_buy_or_rent.\n"
        "API.set_min_square_feet(value: int)"
    ),
    "set_max_square_feet": (
        "# Largest acceptable living area, in square feet. Call it after set_buy_or_rent.\n"
        "API.set_max_square_feet(value: int)"
    ),
    "set_num_beds": (
        "# How many bedrooms the home should have. Call it after set_buy_or_rent.\n"
        "API.set_num_beds(value: int)"
    ),
    "set_num_baths": (
        "# How many bathrooms the home should have; halves are allowed, e.g. 2.5. Call it after "
        "set_buy_or_rent.\n"
        "API.set_num_baths(value: float)"
    ),
    "set_num_garages": (
        "# How many garages the home should have. Call it after set_buy_or_rent.\n"
        "API.set_num_garages(value: int)"
    ),
    "set_num_swimming_pools": (
        "# How many swimming pools the property should have. Call it after set_buy_or_rent.\n"
        "API.set_num_swimming_pools(value: int)"
    ),
    "set_floor_number": (
        "# Which floor the unit should be on (1 is the ground floor). Call it after "
        "set_buy_or_rent.\n"
        "API.set_floor_number(value: int)"
    ),
    "set_num_balconies": (
        "# How many balconies the home should have. Call it after set_buy_or_rent.\n"
        "API.set_num_balconies(value: int)"
    ),
    "set_max_commute_time": (
        "# Longest acceptable commute, in minutes. Call it after set_buy_or_rent.\n"
        "API.set_max_commute_time(value: int)"
    ),
    "search": (
        "# Run the search with every criterion set so far. Call it once, as the last line.\n"
        "API.search()"
    ),
}


def _program(*lines: str) -> str:
    return "\n".join([*lines, "API.search()"])


EXAMPLES: list[tuple[str, str]] = [
    (
        "Looking to buy a condo or townhouse in Denver: 2 bedrooms, 2 bathrooms, under $650,000.",
        _program(
            'API.set_location("Denver")',
            'API.set_buy_or_rent("buy")',
            'API.select_home_type(["Condo", "Townhouse"])',
            "API.set_num_beds(2)",
            "API.set_num_baths(2)",
            "API.set_max_price(650000)",
        ),
    ),
    (
        "Looking for an apartment to rent in Seattle, between $1,800 and $2,600 a month, on the "
        "5th floor with one balcony.",
        _program(
            'API.set_location("Seattle")',
            'API.set_buy_or_rent("rent")',
            'API.select_home_type(["Apartment"])',
            "API.set_min_price(1800)",
            "API.set_max_price(2600)",
            "API.set_floor_number(5)",
            "API.set_num_balconies(1)",
        ),
    ),
    (
        "Find me a house for sale in Austin with 4 bedrooms, 3 baths and 2 garages, at least "
        "2,000 square feet.",
        _program(
            'API.set_location("Austin")',
            'API.set_buy_or_rent("buy")',
            'API.select_home_type(["House"])',
            "API.set_num_beds(4)",
            "API.set_num_baths(3)",
            "API.set_num_garages(2)",
            "API.set_min_square_feet(2000)",
        ),
    ),
    (
        "We'd like to rent a 3-bed house in Phoenix with 1 pool, max $3,200/month, and no more "
        "than a 30 minute commute.",
        _program(
            'API.set_location("Phoenix")',
            'API.set_buy_or_rent("rent")',
            'API.select_home_type(["House"])',
            "API.set_num_beds(3)",
            "API.set_num_swimming_pools(1)",
            "API.set_max_price(3200)",
            "API.set_max_commute_time(30)",
        ),
    ),
    (
        "Show me land or mobile homes for sale near Boise priced from $150k to $400k.",
        _program(
            'API.set_location("Boise")',
            'API.set_buy_or_rent("buy")',
            'API.select_home_type(["Land", "Mobile"])',
            "API.set_min_price(150000)",
            "API.set_max_price(400000)",
        ),
    ),
    (
        "I need to buy a multi-family home or co-op in Chicago, 1,500 to 3,000 sq ft, budget up "
        "to 1.2M.",
        _program(
            'API.set_location("Chicago")',
            'API.set_buy_or_rent("buy")',
            'API.select_home_type(["Multi-family", "Co-op"])',
            "API.set_min_square_feet(1500)",
            "API.set_max_square_feet(3000)",
            "API.set_max_price(1200000)",
        ),
    ),
    (
        "Any condos for rent in Miami on the 12th floor with 2 balconies? I can pay up to "
        "$4,000 a month.",
        _program(
            'API.set_location("Miami")',
            'API.set_buy_or_rent("rent")',
            'API.select_home_type(["Condo"])',
            "API.set_floor_number(12)",
            "API.set_num_balconies(2)",
            "API.set_max_price(4000)",
        ),
    ),
    (
        "Help me purchase a home in Nashville with 3 bedrooms, 2.5 baths and a commute of at "
        "most 25 minutes.",
        _program(
            'API.set_location("Nashville")',
            'API.set_buy_or_rent("buy")',
            "API.set_num_beds(3)",
            "API.set_num_baths(2.5)",
            "API.set_max_commute_time(25)",
        ),
    ),
    (
        "Townhouses for rent in Portland, 2 bed 1.5 bath, no bigger than 1,400 square feet.",
        _program(
            'API.set_location("Portland")',
            'API.set_buy_or_rent("rent")',
            'API.select_home_type(["Townhouse"])',
            "API.set_num_beds(2)",
            "API.set_num_baths(1.5)",
            "API.set_max_square_feet(1400)",
        ),
    ),
    (
        "I'd like to buy a house in San Diego with 5 bedrooms, 2 swimming pools and 3 garages, "
        "priced over $1,500,000.",
        _program(
            'API.set_location("San Diego")',
            'API.set_buy_or_rent("buy")',
            'API.select_home_type(["House"])',
            "API.set_num_beds(5)",
            "API.set_num_swimming_pools(2)",
            "API.set_num_garages(3)",
            "API.set_min_price(1500000)",
        ),
    ),
    (
        "Searching Atlanta rentals: apartment or condo with 1 bedroom, 1 bath, minimum 600 sq "
        "ft, commute under 40 minutes.",
        _program(
            'API.set_location("Atlanta")',
            'API.set_buy_or_rent("rent")',
            'API.select_home_type(["Apartment", "Condo"])',
            "API.set_num_beds(1)",
            "API.set_num_baths(1)",
            "API.set_min_square_feet(600)",
            "API.set_max_commute_time(40)",
        ),
    ),
    (
        "My family wants to buy a co-op in New York on floor 20 with 3 bedrooms, between $900k "
        "and $1.3M.",
        _program(
            'API.set_location("New York")',
            'API.set_buy_or_rent("buy")',
            'API.select_home_type(["Co-op"])',
            "API.set_floor_number(20)",
            "API.set_num_beds(3)",
            "API.set_min_price(900000)",
            "API.set_max_price(1300000)",
        ),
    ),
    (
        "Rent a house in Raleigh with 4 bedrooms and 2 garages, at least 1,800 square feet, "
        "paying at most $2,900 monthly.",
        _program(
            'API.set_location("Raleigh")',
            'API.set_buy_or_rent("rent")',
            'API.select_home_type(["House"])',
            "API.set_num_beds(4)",
            "API.set_num_garages(2)",
            "API.set_min_square_feet(1800)",
            "API.set_max_price(2900)",
        ),
    ),
    (
        "Find homes for sale in Tampa under $350,000 with 2 bathrooms.",
        _program(
            'API.set_location("Tampa")',
            'API.set_buy_or_rent("buy")',
            "API.set_max_price(350000)",
            "API.set_num_baths(2)",
        ),
    ),
]
