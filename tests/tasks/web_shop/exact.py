"""What WebShop's ``get_reward`` gives an exact purchase of a goal, worked out by hand.

Buying the goal's product, with the goal's options, at its price (under the cap) matches every
attribute, the price and, for each goal option ``(name, value)``, the bought value, except
where WebShop's colour normaliser rewrites the bought value into a word that is no token of
the pair. In our catalogue exactly two values do that (checked against every option value
in ``test_only_two_catalogue_values_lose_their_match``):

- "grapefruit" -> "grape": "grape" vs "flavor grapefruit" shares no token, ratio 45;
- "sandalwood" -> "sand": "sand" vs "scent sandalwood" likewise, ratio 40.

Other rewritten values keep their match because the new word is one of the pair's tokens
("navy blue" -> "blue", "black cherry" -> "black", "red switch" -> "red": ratio 100).
So the reward is (#attributes + #options + 1 - misses) / (#attributes + #options + 1), r_type 1.
"""

from __future__ import annotations

from toolbench.tasks.web_shop.catalogue import Goal

NORMALISED_AWAY = frozenset({"grapefruit", "sandalwood"})


def exact_purchase_reward(goal: Goal) -> float:
    parts = len(goal.attributes) + len(goal.goal_options) + 1
    misses = sum(value in NORMALISED_AWAY for value in goal.goal_options.values())
    return (parts - misses) / parts
