/* random.c -- one seeded stream (xoshiro256**) for random ops and initializers, as mx.random.
 * Values are reproducible for a seed within this library; they do not (and cannot) match
 * MXNet's own generator. */
#include <math.h>

#include "mxw_core.h"

static uint64_t g_state[4] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull, 0x94D049BB133111EBull,
                              0x2545F4914F6CDD1Dull};
static int g_have_spare = 0;
static double g_spare = 0.0;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void mxw_random_seed(uint32_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) g_state[i] = splitmix64(&x);
  g_have_spare = 0;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t mxw_rand_u64(void) {
  uint64_t *s = g_state;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* n successive values of mxw_rand_u64 (the same stream), the state kept in locals meanwhile. */
void mxw_rand_u64_fill(uint64_t *out, int64_t n) {
  uint64_t s0 = g_state[0], s1 = g_state[1], s2 = g_state[2], s3 = g_state[3];
  for (int64_t i = 0; i < n; i++) {
    uint64_t t = s1 << 17;
    out[i] = rotl(s1 * 5, 7) * 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 45);
  }
  g_state[0] = s0;
  g_state[1] = s1;
  g_state[2] = s2;
  g_state[3] = s3;
}

double mxw_rand_uniform(void) { return (double)(mxw_rand_u64() >> 11) * 0x1.0p-53; }

/* Box-Muller, keeping the second value of each pair. */
double mxw_rand_normal(void) {
  if (g_have_spare) {
    g_have_spare = 0;
    return g_spare;
  }
  double u1, u2;
  do u1 = mxw_rand_uniform();
  while (u1 <= 0.0);
  u2 = mxw_rand_uniform();
  double r = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
  g_spare = r * sin(th);
  g_have_spare = 1;
  return r * cos(th);
}
