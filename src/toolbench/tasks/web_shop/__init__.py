"""web_shop: multi-turn shopping episodes in a simulated store (WebShop, offline).

The store API (``store.py``: ``Store.load()``, ``store.new_session(goal)``, ``session.step``)
is what the text task, the HTML server and the gymnasium env drive.
"""
