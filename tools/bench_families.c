/* bench_families.c - the family table, built from BENCH_FAMILIES. */
#include <string.h>

#include "tools/bench_families.h"

static const bench_family *const families[] = {
#define BENCH_FAMILY_ENTRY_(name) &bench_family_##name,
    BENCH_FAMILIES(BENCH_FAMILY_ENTRY_)
#undef BENCH_FAMILY_ENTRY_
};

const bench_family *bench_family_find(const char *name)
{
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strcmp(families[i]->name, name) == 0) return families[i];
    return NULL;
}

const char *bench_family_list(void)
{
    static char list[256];
    if (list[0] == '\0')
        for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
            if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, families[i]->name, sizeof list - strlen(list) - 1);
        }
    return list;
}

udnnActivationMode_t bench_act_mode(int i)
{
    return (udnnActivationMode_t)(i < 7 ? i : 100 + (i - 7));
}

double bench_act_default_coef(int i)
{
    switch (bench_act_mode(i)) {
    case UDNN_ACTIVATION_CLIPPED_RELU:
    case UDNN_ACTIVATION_ELU: return 1.0;
    case UDNN_ACTIVATION_LEAKY_RELU: return 0.1;
    default: return 0.0;
    }
}
