"""rlpytorch's bottom layer: what every other layer builds on. Declared settings
(``args_provider``), action and observation spaces, action distributions,
statistics and logging, host-to-device transfer, torch.distributed helpers, a
run's random streams (``seeding``), and ``game_loader`` (the one place that
asks elfpy for a game). It imports nothing else from rlpytorch."""
