# The stand-in's torch.autograd (tests/pytorch/fake/torch/__init__.py).
