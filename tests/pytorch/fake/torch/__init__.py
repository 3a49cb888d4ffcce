# A stand-in for PyTorch in tests/cli-pytorch.sh: what `gputrace run --pytorch`'s start-up
# hook touches (torch.autograd.profiler.emit_nvtx, torch.cuda.synchronize), logging each use
# to $FAKE_TORCH_LOG.
import os

from . import autograd, cuda  # noqa: F401 - as the real torch imports them


def _log(line):
    with open(os.environ["FAKE_TORCH_LOG"], "a") as f:
        f.write(line + "\n")


_log("torch imported")
