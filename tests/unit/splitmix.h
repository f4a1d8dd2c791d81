/* SPDX-License-Identifier: MIT */
/*
 * splitmix64 (Steele, Lea and Flood): the pseudo-random numbers of the host tests and
 * benchmarks that drive guest data structures with random operations (the timer wheel,
 * the hrtimer queue). One generator per program: set rng_state to a seed; the same seed
 * gives the same sequence.
 */
#ifndef PLUGVM_TESTS_SPLITMIX_H
#define PLUGVM_TESTS_SPLITMIX_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) (0 when n is 0). */
static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

#endif
