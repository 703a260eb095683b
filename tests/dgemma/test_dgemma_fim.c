/* DiffusionGemma prompt-level FIM (infill/dgemma_fim.c): the user-turn text of
 * the Gemma-4 template and the clean-up of chat answers. */
#include "check.h"
#include "dgemma_fim.h"

#include <stdlib.h>
#include <string.h>

static void clean_is(const char *ans, const char *pre, const char *suf, const char *want) {
    char *out = NULL;
    size_t n = 0;
    CHECK(ifl_dg_clean(ans, strlen(ans), pre, strlen(pre), suf, strlen(suf), &out, &n) == BASE_OK);
    CHECK(out && n == strlen(want) && strcmp(out, want) == 0);
    if (!out || strcmp(out, want) != 0)
        fprintf(stderr, "clean: got [%s], want [%s]\n", out ? out : "(null)", want);
    free(out);
}

int main(void) {
    char *u = NULL;
    size_t n = 0;
    const char *pre = "def add(a, b):\n    return ", *suf = "\nprint(add(1, 2))\n";
    CHECK(ifl_dg_user_text(pre, strlen(pre), suf, strlen(suf), "python", &u, &n) == BASE_OK);
    const char *want = "Fill in the code at <MISSING> in the file below. Reply with only the "
                       "code that replaces <MISSING>: no explanation, no markdown, and do not "
                       "repeat the code around it.\n\n```python\ndef add(a, b):\n    return "
                       "<MISSING>\nprint(add(1, 2))\n```";
    CHECK(u && n == strlen(want) && strcmp(u, want) == 0);
    free(u);
    /* no language, a suffix without a final newline */
    CHECK(ifl_dg_user_text("x = ", 4, "", 0, NULL, &u, &n) == BASE_OK);
    CHECK(u && strstr(u, "```\nx = <MISSING>\n```") != NULL);
    free(u);

    /* plain code is kept as it is */
    clean_is("a + b", pre, suf, "a + b");
    /* a fenced answer with prose around it */
    clean_is("Here is the missing code:\n```python\na + b\n```\nThis adds the numbers.", pre, suf,
             "a + b");
    /* an unterminated fence */
    clean_is("```\na + b\n", pre, suf, "a + b");
    /* a prose line without a fence */
    clean_is("Sure! The code is:\na + b", pre, suf, "a + b");
    /* the prefix's tail and the suffix's head echoed */
    clean_is("def add(a, b):\n    return a + b\nprint(add(1, 2))", pre, suf, "a + b");
    /* the hole marker echoed */
    clean_is("<MISSING>a + b", pre, suf, "a + b");
    /* short overlaps are real code, not an echo */
    clean_is("turn x", "re", "x", "turn x");
    /* empty answer */
    clean_is("", pre, suf, "");
    return check_finish("test_dgemma_fim");
}
