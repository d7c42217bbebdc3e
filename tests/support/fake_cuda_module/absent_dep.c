/* A library that the stand-in module (module.c) needs and that the loader is not told where
   to find, as a libcudnn missing from a machine. */
int recur_test_absent_dep(void) { return 1; }
