/* strmap.h -- a small open-addressing hash map from borrowed C strings to ints, for the name
 * lookups of the symbol reader and symbol utilities (each lookup O(1) on average, so building
 * and probing n names is linear, never n^2). Keys are not copied: they must outlive the map. */
#ifndef MXW_STRMAP_H_
#define MXW_STRMAP_H_
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct mxw_strmap {
  const char **keys; /* NULL = empty slot */
  int *vals;
  size_t mask, n;
  uint64_t seed; /* per map, so that a file cannot be crafted to make every key collide */
} mxw_strmap;

static inline uint64_t mxw_strhash(uint64_t seed, const char *s) { /* FNV-1a, seeded */
  uint64_t h = 1469598103934665603ull ^ seed;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  h ^= h >> 32;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}
static inline uint64_t mxw_strmap_seed(void) {
  static uint64_t counter = 0;
  uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)&counter << 16) ^ (++counter * 0xbf58476d1ce4e5b9ull);
  x ^= x >> 31;
  return x * 0x94d049bb133111ebull;
}

/* Room for `expected` keys without growing. 0 on success, -1 when out of memory. */
static inline int mxw_strmap_init(mxw_strmap *m, size_t expected) {
  size_t cap = 16;
  while (cap < expected * 2 + 1) cap *= 2;
  m->keys = (const char **)calloc(cap, sizeof *m->keys);
  m->vals = (int *)malloc(cap * sizeof *m->vals);
  m->mask = cap - 1;
  m->n = 0;
  m->seed = mxw_strmap_seed();
  if (!m->keys || !m->vals) {
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    return -1;
  }
  return 0;
}

static inline void mxw_strmap_free(mxw_strmap *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->n = 0;
}

/* The value stored under key, or NULL. */
static inline int *mxw_strmap_find(const mxw_strmap *m, const char *key) {
  for (size_t i = (size_t)mxw_strhash(m->seed, key) & m->mask;; i = (i + 1) & m->mask) {
    if (!m->keys[i]) return NULL;
    if (strcmp(m->keys[i], key) == 0) return &m->vals[i];
  }
}

/* Inserts key -> val, or overwrites the value of an existing key. -1 when out of memory. */
static inline int mxw_strmap_put(mxw_strmap *m, const char *key, int val) {
  if ((m->n + 1) * 2 > m->mask + 1) { /* keep the load under 1/2 */
    mxw_strmap g;
    if (mxw_strmap_init(&g, m->n + 1) != 0) return -1;
    for (size_t i = 0; i <= m->mask; i++)
      if (m->keys[i]) {
        size_t j = (size_t)mxw_strhash(g.seed, m->keys[i]) & g.mask;
        while (g.keys[j]) j = (j + 1) & g.mask;
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
      }
    g.n = m->n;
    mxw_strmap_free(m);
    *m = g;
  }
  size_t i = (size_t)mxw_strhash(m->seed, key) & m->mask;
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & m->mask;
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = val;
  return 0;
}
#endif
