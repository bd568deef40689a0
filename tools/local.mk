# tools/local.mk - udnn-bench (included by the top Makefile.am).
