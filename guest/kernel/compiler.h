/* SPDX-License-Identifier: MIT */
/* Compiler helpers shared by all guest code (and its host-test builds). */
#ifndef PLUGVM_KERNEL_COMPILER_H
#define PLUGVM_KERNEL_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#define likely(x)			__builtin_expect(!!(x), 1)
#define unlikely(x)			__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)			(sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)			(((x) + (a)-1) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a)		((x) & ~((__typeof__(x))(a)-1))
#define DIV_ROUND_UP(n, d)		(((n) + (d)-1) / (d))
#define MIN(a, b)			((a) < (b) ? (a) : (b))
#define MAX(a, b)			((a) > (b) ? (a) : (b))
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#define READ_ONCE(x)	 (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define barrier()	 __asm__ volatile("" : : : "memory")

/* Set bits of a word, without libgcc's table loop or the POPCNT instruction (not on every CPU). */
static inline unsigned popcount64(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ull);
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((v * 0x0101010101010101ull) >> 56);
}

#define __noreturn     __attribute__((noreturn))
#define __unused       __attribute__((unused))
#define __printf(a, b) __attribute__((format(printf, a, b)))
#define __section(s)   __attribute__((section(s)))
#define __aligned(n)   __attribute__((aligned(n)))

#endif
