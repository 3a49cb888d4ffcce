/* The library's lifetime (inject.c), for its two entry points: starting once, from whichever
 * of CUDA's and NVTX's injection runs first, and detaching. Runs inside the traced
 * application; nothing declared here is exported from the library. */
#ifndef GT_COLLECTORS_INJECT_H
#define GT_COLLECTORS_INJECT_H

/* Read the settings and open the client (ring, session or standalone file) once, from
 * whichever entry point runs first (CUDA or NVTX injection). Returns 0 or -errno;
 * thread-safe. */
int gt_inject_start(void);

/* Stop tracing: write a NOTICE (code, detail, message) and PROCESS_END(DETACHED); the trace
 * is completed at exit (gt_client_detach), so the caller (inside cuInit) never waits for the
 * disk. The application continues untraced. */
void gt_inject_detach(unsigned code, int detail, const char *message);

#endif /* GT_COLLECTORS_INJECT_H */
