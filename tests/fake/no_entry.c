/* no_entry.c - a shared object that is no udnn plugin: it lacks the entry
 * symbol, and the loader must say so naming the file. */
__attribute__((visibility("default"))) int udnn_not_a_backend(void)
{
    return 0;
}
