/* infill syntax: language selection. */
#include "syntax.h"

#include "grammars.h"

const char *ifl_syntax_language(const char *language_id, const char *uri) {
    const char *lang = gr_language_for_id(language_id);
    return lang ? lang : gr_language_for_path(uri);
}
