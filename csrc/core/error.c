/* error.c -- the last-error message behind every -1 status. */
#include <stdio.h>
#include <string.h>

#include "mxw_core.h"

static char g_error[2048] = "";

const char *mxw_get_last_error(void) { return g_error; }

/* " (the wasm heap is H MiB; N live arrays and cached graphs hold M MiB); dispose() ..." */
static void heap_state(char *buf, size_t len) {
  double live[3];
  mxw_memory_stats(live);
  double heap = 0;
#ifdef __EMSCRIPTEN__
  heap = (double)__builtin_wasm_memory_size(0) * 65536.0;
#endif
  char heap_s[64] = "";
  if (heap > 0) snprintf(heap_s, sizeof heap_s, "the wasm heap is %.1f MiB; ", heap / 1048576.0);
  snprintf(buf, len,
           " (%s%.0f live arrays and cached graphs hold %.1f MiB); dispose() blocks and arrays no longer "
           "in use to free memory",
           heap_s, live[0], live[1] / 1048576.0);
}

int(mxw_fail)(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
  /* every "out of memory..." message says what the heap holds and what frees it */
  if (strncmp(g_error, "out of memory", 13) == 0 && !strstr(g_error, "dispose()")) {
    size_t n = strlen(g_error);
    heap_state(g_error + n, sizeof g_error - n);
  }
  return -1;
}

/* Out of memory, said the same way everywhere (issue 14): what was being allocated, how many
 * bytes, what the heap holds and in how many live arrays, and the remedy (mxw_fail appends the
 * last two). Never a parse error: a reader that runs out of memory says so. */
int(mxw_fail_oom)(const char *what, double bytes) {
  return mxw_fail("out of memory: %s needs %.0f bytes (%.1f MiB), which the heap cannot provide", what, bytes,
                  bytes / 1048576.0);
}

void mxw_error_prefix(const char *fmt, ...) {
  char prefix[512], old[sizeof g_error];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, g_error, sizeof old);
  size_t n = strlen(prefix);
  if (n >= sizeof g_error) n = sizeof g_error - 1;
  memcpy(g_error, prefix, n);
  size_t rest = strlen(old);
  if (rest > sizeof g_error - 1 - n) rest = sizeof g_error - 1 - n;
  memcpy(g_error + n, old, rest);
  g_error[n + rest] = 0;
}
