/* error.c -- the last-error message behind every -1 status. */
#include <stdio.h>

#include "mxw_core.h"

static char g_error[2048] = "";

const char *mxw_get_last_error(void) { return g_error; }

int mxw_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
  return -1;
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
