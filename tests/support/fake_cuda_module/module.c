/* A stand-in librecur_cuda.so that is present but cannot be opened: it needs
   librecur_test_absent_dep.so (absent_dep.c), which is off the loader's search path. The call
   keeps the linker from dropping the dependency (--as-needed). */
int recur_test_absent_dep(void);
int recur_test_fake_module(void) { return recur_test_absent_dep(); }
