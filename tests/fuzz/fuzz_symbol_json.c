/* fuzz_symbol_json: the symbol JSON reader in every dialect (0.8 "param" with
 * backward_source_id, 0.9-1.0 "attr", 1.x "attrs"; 2- and 3-element entries; the legacy
 * upgrades), through mxw_sym_fromjson, the entry point sym.fromJSON / sym.load /
 * SymbolBlock.imports use; then what the JS side does with a loaded symbol: its listing
 * (mxw_sym_info), internals, the executor's graph index (mxw_exec_create), shape/dtype
 * inference (from the variables' __shape__/__dtype__ hints, and once more with a "data" input of
 * (1, 3, 32, 32)), and writing it back.
 *
 * Invariants beyond "no crash, no leak, no hang, within the memory budget":
 *   - a symbol that loads can be listed and written (mxw_sym_info, mxw_sym_tojson succeed);
 *   - what it writes loads again and writes the same text (the writer's output is a fixed point;
 *     attribute keys are written escaped since b9ac923, so this holds for any key). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_budget_begin();
  char *text = fuzz_cstr(data, size);
  mxw_symbol *s = NULL;
  if (mxw_sym_fromjson(text, &s) == 0) {
    FUZZ_CHECK(mxw_sym_info(s) != NULL, "a loaded symbol cannot be listed");
    mxw_symbol *in = NULL;
    if (mxw_sym_internals(s, &in) == 0) {
      (void)mxw_sym_info(in);
      mxw_sym_free(in);
    }
    mxw_executor *ex = NULL; /* what SymbolBlock's first forward builds: the indexed graph */
    if (mxw_exec_create(s, &ex) == 0) mxw_exec_free(ex);
    const char *r = mxw_sym_infer(s, "{}");
    if (fuzz_verbose()) fprintf(stderr, "inference from the variables' hints: %s\n", r ? r : mxw_get_last_error());
    r = mxw_sym_infer(s, "{\"shapes\": {\"data\": [1, 3, 32, 32]}}");
    if (fuzz_verbose()) fprintf(stderr, "inference with data (1, 3, 32, 32): %s\n", r ? r : mxw_get_last_error());
    char *j1 = NULL, *j2 = NULL;
    FUZZ_CHECK(mxw_sym_tojson(s, &j1) == 0, "a loaded symbol cannot be written");
    mxw_symbol *s2 = NULL;
    FUZZ_CHECK(mxw_sym_fromjson(j1, &s2) == 0, "the written JSON does not load again:\n%s", j1);
    FUZZ_CHECK(mxw_sym_tojson(s2, &j2) == 0, "the reloaded symbol cannot be written");
    FUZZ_CHECK(strcmp(j1, j2) == 0, "writing is not a fixed point:\n--- first\n%s\n--- second\n%s", j1, j2);
    mxw_buffer_free(j1);
    mxw_buffer_free(j2);
    mxw_sym_free(s2);
    mxw_sym_free(s);
    if (fuzz_verbose()) fprintf(stderr, "loaded\n");
  } else if (fuzz_verbose()) {
    fprintf(stderr, "not loaded: %s\n", mxw_get_last_error());
  }
  free(text);
  fuzz_budget_end(size, "mxw_sym_fromjson");
  return 0;
}
