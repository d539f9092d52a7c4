"""The acting layer: turning a batch of observations into replies. ``act`` runs a
model on the engine's batch, ``sampler`` and ``exploration`` pick the actions,
``prev_inputs`` makes the previous action and reward inputs, and ``predict``
answers single observations. It imports only from ``rlpytorch.core``."""
