"""web_shop for people and agent frameworks: the store as HTML pages and a JSON API
(``app.py``), episodes with the original's turn cap (``episode.py``), and a person as the
model of a web_shop run, answering each turn from the browser (``human.py``)."""
