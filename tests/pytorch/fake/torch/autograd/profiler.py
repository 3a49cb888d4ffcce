# The stand-in's emit_nvtx: a context manager that logs how it was entered, on which thread,
# and calls torch.cuda.synchronize() first as the real one does.
import threading

import torch


class emit_nvtx:
    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        torch.cuda.synchronize()
        torch._log("emit_nvtx entered record_shapes=%s thread=%s"
                   % (self.record_shapes, threading.current_thread().name))
        return self

    def __exit__(self, *exc):
        torch.cuda.synchronize()
        torch._log("emit_nvtx exited thread=%s" % threading.current_thread().name)
        return False
