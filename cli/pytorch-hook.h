/* Finding the folder of the start-up hook of `gputrace run --pytorch` (its sitecustomize.py,
 * python/pytorch/) that run puts first on the program's PYTHONPATH. Runs in the CLI. */
#ifndef GPUTRACE_CLI_PYTORCH_HOOK_H
#define GPUTRACE_CLI_PYTORCH_HOOK_H

#include <stddef.h>

/* What the hook does, read by it in the program: on, shapes (record_shapes=True), or
 * nothing when unset, empty, 0 or off. `gputrace run --pytorch[=shapes]` sets it. */
#define GT_ENV_PYTORCH "GPUTRACE_PYTORCH"

/* The folder, in this order: the installed layout relative to this executable
 * (<prefix>/bin/gputrace -> <prefix>/<datadir>/gputrace/pytorch); the build tree
 * (<build>/cli/gputrace -> <build>/python/pytorch); the datadir configured at build time.
 * Returns 0 with the absolute path in out[bytes], or -ENOENT with the places looked at,
 * separated by ", ", in tried[tried_bytes]. */
int gt_pytorch_hook_find(char *out, size_t bytes, char *tried, size_t tried_bytes);

#endif /* GPUTRACE_CLI_PYTORCH_HOOK_H */
