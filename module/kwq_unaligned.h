/* SPDX-License-Identifier: GPL-2.0 */
/*
 * get_unaligned()/put_unaligned(): <asm/unaligned.h> moved to
 * <linux/unaligned.h> in 6.12 (the old one was removed).
 */
#ifndef _KWQ_UNALIGNED_H
#define _KWQ_UNALIGNED_H

#include <linux/version.h>

#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif /* _KWQ_UNALIGNED_H */
