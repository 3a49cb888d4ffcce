# The program of tests/cli-pytorch.sh: prints what it sees (its sys.path, and torch's
# loader), imports torch when asked (argv[1] == "torch") and synchronizes once, starts a
# thread, and exits 3.
import sys
import threading

print("argv", sys.argv[1:])
print("path", sys.path)
if sys.argv[1:] == ["torch"]:
    import torch

    print("loader", type(torch.__loader__).__name__, type(torch.__spec__.loader).__name__)
    torch.cuda.synchronize()  # the program's own call: logged once, hook or not
    t = threading.Thread(target=lambda: None, name="worker")
    t.start()
    t.join()
sys.exit(3)
