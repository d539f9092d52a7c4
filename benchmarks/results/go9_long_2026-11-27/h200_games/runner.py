"""Device only: `bench_go.py gnugo` with the committed network's weights run by
the PyTorch module on DEVICE (the exported file pins its inputs to the CPU).

Kept as it ran on the H200 machine on 2026-11-28 (games 50-99 of the match in
gnugo_level10_65M_12800playouts_leaves32_sampled4_reuse_100games.log), from a
folder .devgo/ in the repository's root holding this file, device_go.sh, GNU
Go's binary with its two libraries (libreadline 8, libtinfo 6) behind a
wrapper bin/gnugo, the wheels of gymnasium 1.4.0 and farama-notifications
0.0.6, and the weights, written by
    python -c "import numpy as np; from elfpy.network_file import load_network;
    m = load_network('pretrained/go9_selfplay_65M.pt2');
    np.savez('.devgo/go9_selfplay_65M.npz', **{k[4:]: v.numpy() for k, v in m.state_dict().items()})"
On the CPU its evaluations equal the exported file's (largest difference 0.0
on 32 random positions) and it plays the same games (game 51 at 200 playouts,
move for move)."""
import os
import sys

sys.path.insert(0, "benchmarks")
import bench_go  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from rlpytorch.models.policy_value import PolicyValueNet, PolicyValueSettings, masked_policy  # noqa: E402

DEVICE = os.environ.get("DEVICE", "cuda")


def module_evaluator(path):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    weights = np.load(os.path.join(os.path.dirname(__file__), "go9_selfplay_65M.npz"))
    net = PolicyValueNet(23, 9, 82, PolicyValueSettings(channels=32, blocks=3))
    net.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
    net.eval().to(DEVICE)

    def evaluate(s, legal):
        with torch.inference_mode():
            logits, value = net(torch.from_numpy(s).to(DEVICE))
            policy = masked_policy(logits, torch.from_numpy(legal).to(DEVICE))
        return policy.cpu().numpy(), value.cpu().numpy()

    return evaluate


bench_go.load_evaluator = module_evaluator
sys.argv = ["bench_go.py", *sys.argv[1:]]
bench_go.main()
