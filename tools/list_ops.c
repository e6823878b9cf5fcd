/* list_ops: prints every registered operator as "name alias1 alias2 ..." per line, straight
 * from the C registry (native build). The JS registry test compares the generated nd namespace
 * with this list, so the JS side is checked against C, not against itself. */
#include <stdio.h>

#include "core/mxw_core.h"

int main(void) {
  int n = mxw_op_count();
  for (int i = 0; i < n; i++) {
    const mxw_op_def *op = mxw_op_get(i);
    fputs(op->name, stdout);
    for (const char *const *a = op->aliases; a && *a; a++) printf(" %s", *a);
    putchar('\n');
  }
  return 0;
}
