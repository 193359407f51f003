"""booking's tools for ``--mode tools``: the API's methods with the values its docs allow.

``Loc`` and ``Date`` are not tools: a place parameter takes the place name as a string and a
date parameter takes ``{"month", "day", "year"}``; the converter writes ``Loc(...)`` and
``Date(...)`` into the program. The room type keeps its enum as advice only: the API accepts
any room type (as the original did), so the simulator, not the schema, has the last word.
"""

from toolbench.kinds.tool_calling import Kind, derive_toolset
from toolbench.tasks.booking import docs
from toolbench.tasks.booking.world import (
    BOOKING_TYPES,
    ROOM_TYPES,
    TRANSPORTATION_TYPES,
    BookingAPI,
    Date,
    Loc,
)

TOOLSET = derive_toolset(
    BookingAPI,
    docs.FUNCTIONS,
    allowed={
        ("select_booking_type", "booking_type"): BOOKING_TYPES,
        ("select_transportation", "transportation_type"): TRANSPORTATION_TYPES,
        ("select_room_type", "value"): ROOM_TYPES,
    },
    wrappers={Loc: Kind.PLACE, Date: Kind.DATE},
)
