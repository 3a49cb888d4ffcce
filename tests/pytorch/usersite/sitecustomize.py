# A user's own sitecustomize (tests/cli-pytorch.sh): it must still run under --pytorch.
import os

with open(os.environ["FAKE_TORCH_LOG"], "a") as f:
    f.write("user sitecustomize ran\n")
