"""home_search's tools for ``--mode tools``: the API's methods with the values its docs allow.

Home types are offered with the docs' capitals ('House', 'Co-op'): the API lower-cases them,
and which of them fit 'buy' or 'rent' is the simulator's rule, told in the description.
"""

from toolbench.kinds.tool_calling import derive_toolset
from toolbench.tasks.home_search import docs
from toolbench.tasks.home_search.world import (
    BUY_HOME_TYPES,
    BUY_OR_RENT,
    RENT_HOME_TYPES,
    HomeSearchAPI,
)


def _capitalised(name: str) -> str:
    return name[0].upper() + name[1:]


HOME_TYPES = tuple(_capitalised(t) for t in dict.fromkeys(BUY_HOME_TYPES + RENT_HOME_TYPES))

TOOLSET = derive_toolset(
    HomeSearchAPI,
    docs.FUNCTIONS,
    allowed={
        ("set_buy_or_rent", "value"): BUY_OR_RENT,
        ("select_home_type", "home_types"): HOME_TYPES,
    },
)
