/* grammars: module-private declarations shared with the generated query table. */
#ifndef INFILLD_GRAMMARS_IMPL_H
#define INFILLD_GRAMMARS_IMPL_H

#include <stddef.h>

/* One embedded query file: path relative to grammars/queries ("c/spans.scm"). */
typedef struct gr__query_file {
    const char *path;
    const char *text;
    size_t len;
} gr__query_file;

/* Terminated by an entry with path NULL. Generated at configure time. */
extern const gr__query_file gr__query_files[];

#endif
