/* SPDX-License-Identifier: GPL-2.0 */
/* kwqctl: commands implemented outside kwqctl.c. */
#ifndef KWQCTL_H
#define KWQCTL_H

#include "libkwq.h"

/* Set by --kernel: names are those of the kernel scope (kwq_open_kernel()). */
extern int kernel_scope;

/* kwqctl metrics [--json] [NAME...]: Prometheus text format or JSON. */
/* Returns 2 on a usage error. */
int kwqctl_metrics(int argc, char **argv, int json);
/* kwqctl top [--interval MS] [--count N]: a refreshing table. */
int kwqctl_top(int argc, char **argv);

/*
 * Every queue name of the scope (kwqctl.c), however many there are: a
 * calloc()ed array of *@n names, or NULL with *@n a negative errno.
 */
char (*kwqctl_list_all(int *n))[KWQ_NAME_MAX];

/* A whole argument as a number (strtol() base 0): 0, or -EINVAL. */
int parse_long(const char *s, long *out);

/* JSON output (json.c): a quoted, escaped string; one queue's stats object. */
void json_string(const char *s);
void json_stats(const char *name, const struct kwq_stats *st);

#endif /* KWQCTL_H */
