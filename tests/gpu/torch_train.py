# GPU suite: a real application under the injection library. A small MLP trains for 20 eager
# steps inside NVTX "step" ranges, then replays a captured CUDA graph of its forward pass 10 times.
# tests/gpu/check.c ("pytorch") asserts the kernels, the graph launches and the ranges.
# Runs on the GPU machine with the image's python3 (PyTorch); exits 77 without torch or a GPU.
import sys

try:
    import torch
except ImportError:
    print("no torch: skipping")
    sys.exit(77)
if not torch.cuda.is_available():
    print("no CUDA device: skipping")
    sys.exit(77)

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
loss_fn = torch.nn.CrossEntropyLoss()


def step():
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


for i in range(20):
    torch.cuda.nvtx.range_push("step")
    opt.zero_grad(set_to_none=True)
    loss = step()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()

# CUDA graph of the forward pass, the way PyTorch's documentation captures inference: warm up
# on a side stream, capture under no_grad, then copy new inputs into the static input and replay.
# (Capturing backward() and the optimizer step fails on this PyTorch even without any tracer:
# cudaErrorStreamCaptureImplicit, the legacy stream made to depend on the capturing one.)
static_x = torch.randn(64, 256, device=dev)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s), torch.no_grad():
    for _ in range(3):
        model(static_x)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.no_grad(), torch.cuda.graph(g):
    static_out = model(static_x)
for _ in range(10):
    torch.cuda.nvtx.range_push("graph-step")
    static_x.copy_(x)
    g.replay()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("pytorch loss %.4f, graph output sum %.4f" % (loss.item(), static_out.sum().item()))
