"""The TD3 update check of tests/rlpytorch/test_offpolicy_matches_sb3.py run for many updates in a row
(the HalfCheetah note's section 21): ours and Stable-Baselines3's TD3 from the same weights, on the same
batches and smoothing noise, in float64, at SB3's Adam eps and with our eps doubled (the critic loss we
had before it became SB3's sum of squares); the largest difference of any weight after each count:

    python benchmarks/results/halfcheetah_td3_2026-11-27/long_update_check.py 4 1000
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "rlpytorch"))
import test_offpolicy_matches_sb3 as check  # noqa: E402


def main(counts: list[int]) -> None:
    for updates in counts:
        check.UPDATES = updates  # the module's batches, noise draws and SB3's train() all read it
        with pytest.MonkeyPatch.context() as patch:
            same = check.td3_gap(patch)
        with pytest.MonkeyPatch.context() as patch:
            doubled = check.td3_gap(patch, our_eps=2 * check.ADAM_EPS)
        print(f"{updates:,} updates: largest |ours - SB3| {same:.2g} at SB3's eps, {doubled:.2g} with ours doubled",
              flush=True)


if __name__ == "__main__":
    main([int(n) for n in sys.argv[1:]] or [4, 1000])
