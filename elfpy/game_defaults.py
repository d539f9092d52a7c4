"""A native game's option defaults, as the game declares them.

Python tools around a game (GTP's komi, the MiniRTS renderer's map size) read
a default here instead of restating it, so each default lives once: in the
game's C++ option declaration, which ``GameContext.game_options`` lists.
"""

from __future__ import annotations

from elfpy.context import GameContext


def option_default(game: str, name: str) -> str:
    """The default of option ``name`` of ``game`` as the game writes it
    ("7.5", "true"); ValueError naming both if the game has no such option."""
    for option, default, _ in GameContext.game_options(game):
        if option == name:
            return default
    raise ValueError(f"game {game!r} has no option {name!r}")
