/* replay_main.c -- the main() of a fuzz target outside libFuzzer: feeds files to its
 * LLVMFuzzerTestOneInput. CMakeLists.txt builds one fuzz_replay_<target> per target in the
 * normal native (ASan/UBSan) build, and ctest runs it on every test run over
 *   tests/fuzz/corpus/<target>/        the committed seeds,
 *   tests/fuzz/regressions/<target>/   the crashers found so far, fixed: each must now pass;
 * and, with --expect-crash, over
 *   tests/fuzz/regressions/pending/<target>/   crashers whose fix is not in yet: each must still
 *     fail (crash, sanitizer report, leak, timeout); one that passes fails the test with a
 *     message saying to move it into regressions/<target>/.
 *
 *   fuzz_replay_<target> [--expect-crash] [--timeout SECONDS] FILE_OR_DIR...
 * Directories are read recursively in name order (dot files and README* skipped). Each input
 * gets --timeout seconds (default 20): an input that takes longer is a hang. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_common.h"

static int g_expect_crash = 0;
static unsigned g_timeout = 20;
static int g_count = 0, g_unexpected = 0;
static const char *g_current = "";

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "\nTIMEOUT: an input ran longer than the limit (a hang): ";
  if (write(2, msg, sizeof msg - 1) < 0) {
  }
  if (write(2, g_current, strlen(g_current)) < 0) {
  }
  if (write(2, "\n", 1) < 0) {
  }
  _exit(70);
}

static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *p = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      uint8_t *q = (uint8_t *)realloc(p, cap);
      if (!q) {
        free(p);
        fclose(f);
        return NULL;
      }
      p = q;
    }
    got = fread(p + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *len = n;
  return p;
}

static void run_one(const char *path) {
  size_t len = 0;
  uint8_t *data = read_all(path, &len);
  if (!data) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  g_current = path;
  g_count++;
  if (!g_expect_crash) {
    fprintf(stderr, "replaying %s (%zu bytes)\n", path, len);
    alarm(g_timeout);
    LLVMFuzzerTestOneInput(data, len);
    alarm(0);
    free(data);
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    alarm(g_timeout);
    LLVMFuzzerTestOneInput(data, len);
    alarm(0);
    free(data);
    exit(0); /* exit, not _exit: LeakSanitizer's check runs, and a leak counts as failing */
  }
  int st = 0;
  waitpid(pid, &st, 0);
  free(data);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    g_unexpected++;
    fprintf(stderr,
            "NOW PASSES: %s -- the finding is fixed: move the file from tests/fuzz/regressions/pending/<target>/ "
            "to tests/fuzz/regressions/<target>/ (and mark it fixed in tests/fuzz/README.md)\n",
            path);
  } else if (WIFEXITED(st)) {
    fprintf(stderr, "still fails, as expected until fixed (exit %d%s): %s\n", WEXITSTATUS(st),
            WEXITSTATUS(st) == 70 ? ", timeout" : "", path);
  } else {
    fprintf(stderr, "still fails, as expected until fixed (signal %d): %s\n", WTERMSIG(st), path);
  }
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static void run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return; /* an absent folder holds no inputs */
  if (!S_ISDIR(st.st_mode)) {
    run_one(path);
    return;
  }
  struct dirent **list = NULL;
  int n = scandir(path, &list, NULL, by_name);
  for (int i = 0; i < n; i++) {
    const char *name = list[i]->d_name;
    if (name[0] != '.' && strncmp(name, "README", 6) != 0) {
      size_t l = strlen(path) + strlen(name) + 2;
      char *child = (char *)malloc(l);
      snprintf(child, l, "%s/%s", path, name);
      run_path(child);
      free(child);
    }
    free(list[i]);
  }
  free(list);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  int paths = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect-crash") == 0)
      g_expect_crash = 1;
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
      g_timeout = (unsigned)atoi(argv[++i]);
    else {
      run_path(argv[i]);
      paths++;
    }
  }
  if (!paths) {
    fprintf(stderr, "usage: %s [--expect-crash] [--timeout SECONDS] FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  printf("%s %d input%s%s\n", g_expect_crash ? "checked" : "replayed", g_count, g_count == 1 ? "" : "s",
         g_expect_crash ? " expected to fail" : " without a finding");
  return g_unexpected ? 1 : 0;
}
