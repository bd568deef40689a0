# cuda/local.mk - the CUDA backend plugin (included by the top Makefile.am).
