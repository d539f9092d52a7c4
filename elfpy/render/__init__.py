"""Pictures and replays of games, one module per game (``elfpy.render.minirts``).

They drive a game through ``GameContext`` with a policy given as a plain
callable (batch -> actions), so they need no RL library.
"""
