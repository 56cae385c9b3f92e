/* SPDX-License-Identifier: GPL-2.0 */
/* kwqctl: commands implemented outside kwqctl.c. */
#ifndef KWQCTL_H
#define KWQCTL_H

/* kwqctl metrics [NAME...]: Prometheus text format. */
int kwqctl_metrics(int argc, char **argv);
/* kwqctl top [--interval MS] [--count N]: a refreshing table. */
int kwqctl_top(int argc, char **argv);

#endif /* KWQCTL_H */
