"""Watch and play the platform's games in a browser (``python -m elfweb``).

It sits above elfpy and rlpytorch (it runs games through one and loads models
through the other); neither imports it. ``elfweb.server`` is the ASGI app;
``elfweb.watch``, ``elfweb.minirts_play`` (MiniRTS with the mouse) and
``elfweb.go_game`` the games it serves; ``elfweb.messages`` what a page may
send, ``elfweb.catalog`` what a page may open.
"""
