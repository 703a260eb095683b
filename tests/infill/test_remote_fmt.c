/* The remote formats: the per-model FIM templates (names, matching, SPM
 * order) and the clean-up of a chat model's answer (thinking, fences, prose,
 * echoes of the text around the hole). No network. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "source.h"

#include <stdlib.h>
#include <string.h>

static void clean(const char *pre, const char *suf, const char *text, const char *want) {
    char *out = NULL;
    size_t n = 0;
    CHECK_EQ_I(ifl_chat_clean(pre, strlen(pre), suf, strlen(suf), text, strlen(text), &out, &n),
               BASE_OK);
    if (!out || strcmp(out, want) != 0)
        fprintf(stderr, "clean(%s) = \"%s\", want \"%s\"\n", text, out ? out : "(null)", want);
    CHECK_STR(out, want);
    CHECK_EQ_I((int)n, (int)strlen(want));
    free(out);
}

int main(void) {
    const char *P = "def add(a, b):\n    return ", *S = "\n\nprint(add(1, 2))\n";
    clean(P, S, "a + b", "a + b");
    clean(P, S, "```python\n    return a + b\n```", "a + b");
    clean(P, S, "Here is the missing code:\n\n```python\na + b\n```\n\nIt adds them.", "a + b");
    clean(P, S, "Sure! Here is the code:\na + b", "a + b");
    clean(P, S, "<think>the sum</think>a + b", "a + b");
    clean(P, S, "def add(a, b):\n    return a + b", "a + b");
    clean(P, S, "a + b<|HOLE|>", "a + b");
    /* The whole rest of the file echoed after the answer. */
    clean(P, S, "a + b\n\nprint(add(1, 2))\n", "a + b");
    /* The rest of the cursor's line alone stays (the post-processing's call). */
    clean("x = f(", ")\ny = 2\n", "g(1)", "g(1)");
    /* Code that merely starts like a line of the prefix, mid-line: kept. */
    clean("s = ", "\n", "s + 1", "s + 1");
    /* An unterminated fence: everything after it. */
    clean(P, S, "```py\na + b", "a + b");

    const ifl_fim_template *t = ifl_fim_template_find(NULL, "Qwen/Qwen2.5-Coder-7B-Instruct");
    CHECK(t && strcmp(t->name, "qwen2.5-coder") == 0);
    CHECK(ifl_fim_template_find(NULL, "bigcode/StarCoder2-15b") ==
          ifl_fim_template_find("starcoder", NULL));
    CHECK(ifl_fim_template_find(NULL, "google/codegemma-2b") ==
          ifl_fim_template_find("codegemma", NULL));
    CHECK(ifl_fim_template_find(NULL, "mystery-model") == NULL);
    CHECK(ifl_fim_template_find("nope", "Qwen2.5-Coder") == NULL);
    size_t n;
    char *s = ifl_fim_render(t, "a", 1, "b", 1, &n);
    CHECK_STR(s, "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>");
    CHECK_EQ_I((int)n, (int)strlen(s));
    free(s);
    s = ifl_fim_render(ifl_fim_template_find("codestral", NULL), "a", 1, "b", 1, &n);
    CHECK_STR(s, "[SUFFIX]b[PREFIX]a");
    free(s);
    s = ifl_fim_render(ifl_fim_template_find("codellama", NULL), "a", 1, "b", 1, &n);
    CHECK_STR(s, "<PRE> a <SUF>b <MID>");
    free(s);
    s = ifl_chat_user("a", 1, "b", 1);
    CHECK_STR(s, "a<|HOLE|>b");
    free(s);
    return check_finish("test_remote_fmt");
}
