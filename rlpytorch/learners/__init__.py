"""The learners: the loops' update half, turning the engine's windows or replay into
optimizer steps. ``trainer`` learns on-policy from windows, ``value_trainer``
from replay for value methods, ``offpolicy_trainer`` from replay for continuous
actor-critic methods, ``seat_windows`` joins a game's seats for a
centralised critic, and ``evaluator`` plays a fixed model without learning.
They may import ``core``, ``acting``, ``models``, ``replay`` and ``methods``,
never ``run`` or the entry points."""
