"""rlpytorch: reinforcement learning in PyTorch on the engine's batches.

Components are small and replaceable, each declaring its own arguments
(``args_provider``); data is time-major ``[T, B, ...]`` throughout. This
package never imports the engine: it sees batches as mappings of arrays.
"""
