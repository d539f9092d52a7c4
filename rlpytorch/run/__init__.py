"""Running a training: the loops that drive the engine (``single_process``,
``multi_process``, ``eval_iters``), the run's folder (``run_dir``), resuming
from it (``resume``) and what a training says as it starts and ends
(``screen``). This layer may import every layer below it (``core``,
``acting``, ``models``, ``replay``, ``methods``, ``learners``); only the entry
points at the package root import it."""
