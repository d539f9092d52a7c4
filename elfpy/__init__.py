"""elfpy: the Python face of the ELF engine.

Games run in C++ worker threads; their states reach Python in batches, one
stream per tag, either through callbacks (`reg_callback` + `run`) or by
iterating over the context. See `GameContext` for the loop and the meaning of
every key.
"""

from elfpy._elf import GameError
from elfpy.context import Batch, GameContext, KeySpec, TagInfo, games
from elfpy.single_env import SingleEnv, make
from elfpy.vector import NativeVectorEnv, make_vector

__all__ = ["Batch", "GameContext", "GameError", "KeySpec", "NativeVectorEnv", "SingleEnv", "TagInfo", "games", "make",
           "make_vector"]
