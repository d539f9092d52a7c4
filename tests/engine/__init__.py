"""The engine's pytest suite: elfpy.GameContext driving the native games."""
