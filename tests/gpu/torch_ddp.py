# A small data-parallel training job, one process per rank, started by torchrun: each rank
# trains an MLP under DistributedDataParallel for 12 steps, each step inside an NVTX range
# "ProfilerStep#N" as PyTorch's profiler names its steps. The backend is NCCL when every rank
# has a GPU of its own, else gloo (ranks sharing one GPU: NCCL refuses a GPU used twice). Rank 1
# does extra work in steps 4 and 8, so it is the straggler there. Exits 77 without torch or a
# GPU. Usage: torchrun --nproc-per-node N torch_ddp.py
import os
import sys

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("no torch: skipping")
    sys.exit(77)
if not torch.cuda.is_available():
    print("no CUDA device: skipping")
    sys.exit(77)

rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
local = int(os.environ.get("LOCAL_RANK", "0"))
ngpu = torch.cuda.device_count()
backend = "nccl" if ngpu >= world else "gloo"
torch.cuda.set_device(local % ngpu)
dist.init_process_group(backend)
dev = torch.device("cuda", local % ngpu)
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(dev)
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
x = torch.randn(64, 256, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
loss_fn = torch.nn.CrossEntropyLoss()
a = torch.randn(1024, 1024, device=dev)
for i in range(12):
    torch.cuda.nvtx.range_push("ProfilerStep#%d" % i)
    opt.zero_grad(set_to_none=True)
    torch.cuda.nvtx.range_push("forward")
    loss = loss_fn(ddp(x), y)
    torch.cuda.nvtx.range_pop()
    if rank == 1 and i in (4, 8):
        for _ in range(20):
            a = a @ a
            a = a / a.norm()
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
dist.barrier()
print("rank %d of %d (%s) loss %.4f" % (rank, world, backend, loss.item()))
dist.destroy_process_group()
