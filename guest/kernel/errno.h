/* SPDX-License-Identifier: MIT */
/*
 * Error numbers: Linux's values, so a guest error reads the same in a log, in the agent
 * channel's status (common/plugvm_agent.h: negated Linux errno) and in a host test (the C
 * library defines the same names with the same values). Functions return 0 or -E...
 */
#ifndef PLUGVM_KERNEL_ERRNO_H
#define PLUGVM_KERNEL_ERRNO_H

#define EPERM	  1 /* not allowed (a removal refused by policy) */
#define EIO	  5 /* a device or a step failed */
#define EAGAIN	  11 /* not now: try again later */
#define ENOMEM	  12
#define EBUSY	  16 /* already in use */
#define ENODEV	  19 /* no such device (a CPU not plugged in) */
#define EINVAL	  22 /* bad argument */
#define ENOSPC	  28 /* a table is full */
#define EDEADLK	  35 /* would deadlock (recursion) */
#define ENOSYS	  38 /* not implemented */
#define EPROTO	  71 /* malformed message */
#define ETIMEDOUT 110

#endif
