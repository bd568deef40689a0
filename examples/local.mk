# examples/local.mk - the examples (included by the top Makefile.am).
