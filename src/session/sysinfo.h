/* Facts about the machine that both processes record: the NVIDIA kernel module's version.
 * Runs in both processes; no allocation. */
#ifndef GPUTRACE_SYSINFO_H
#define GPUTRACE_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>

/* The version in a /proc/driver/nvidia/version line ("NVRM version: NVIDIA UNIX x86_64 Kernel
 * Module  580.65.06  Sun Jul ..." or "... Open Kernel Module for x86_64  580.159.04 ..."): the
 * first word that starts with a digit and holds a dot. Writes it to buf; false if none. */
bool gt_sysinfo_parse_driver_version(const char *line, char *buf, size_t bytes);

/* Read /proc/driver/nvidia/version and parse it. False without the NVIDIA module. */
bool gt_sysinfo_driver_version(char *buf, size_t bytes);

#endif /* GPUTRACE_SYSINFO_H */
