/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Found before the kernel tree's own <linux/version.h> by scripts/lint.sh's
 * compile-only check of kwq's branches for kernels newer than 6.12: it
 * claims 6.18.0 so that every KERNEL_VERSION(6, 13..18, 0) test in kwq
 * takes its newer branch. Never used for a module that is loaded.
 */
#define LINUX_VERSION_CODE 397824
#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_MAJOR 6
#define LINUX_VERSION_PATCHLEVEL 18
#define LINUX_VERSION_SUBLEVEL 0
