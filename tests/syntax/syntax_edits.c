/* Edit-and-compare loop for incremental parsing (see syntax_edits.h). */
#include "syntax_edits.h"

#include "syntax.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const syntax_edits_seed syntax_edits_seeds[] = {
    {"c",
     "#include <stdio.h>\n\nint add(int a, int b) {\n    int t = a + b; /* sum */\n    if (t > "
     "0) {\n        printf(\"%d\\n\", t);\n    }\n    return t;\n}\n"},
    {"cpp",
     "#include <vector>\n\nclass A {\npublic:\n    int f(std::vector<int> &v) const {\n      "
     "  int s = 0;\n        for (auto x : v) s += x;\n        return s;\n    }\n};\n"},
    {"python", "import os\n\n\ndef f(xs, *, key=None):\n    \"\"\"Doc.\"\"\"\n    total = 0\n    "
               "for x in xs:\n        if x > 0:\n            total += x  # add\n    return "
               "[t for t in (total,)]\n"},
    {"javascript", "function add(a, b) {\n  const t = `${a} + ${b}`;\n  if (a > b) {\n    return "
                   "a;\n  }\n  return [a, b].map((x) => x * 2);\n}\n"},
    {"typescript", "interface P { x: number; y: number }\n\nfunction norm(p: P): number {\n  "
                   "return Math.sqrt(p.x * p.x + p.y * p.y);\n}\n"},
    {"tsx",
     "function App(props: { n: number }) {\n  return <div className=\"a\">{props.n}</div>;\n}\n"},
    {"go",
     "package main\n\nimport \"fmt\"\n\nfunc add(a int, b int) int {\n\tif a > b {\n\t\treturn "
     "a\n\t}\n\tfmt.Println(a, b)\n\treturn a + b\n}\n"},
    {"rust",
     "fn add(a: i32, b: i32) -> i32 {\n    let v: Vec<i32> = vec![a, b];\n    match a {\n    "
     "    0 => b,\n        _ => v.iter().sum(),\n    }\n}\n"},
    {"java",
     "class A {\n    int add(int a, int b) {\n        // sum\n        if (a > b) {\n            "
     "return a;\n        }\n        return a + b;\n    }\n}\n"},
    {"lua", "local function add(a, b)\n  if a > b then\n    return a\n  end\n  return a + b -- "
            "sum\nend\n"},
    {"bash",
     "#!/bin/bash\nset -e\nfor f in *.txt; do\n  if [ -f \"$f\" ]; then\n    echo \"$f\"\n  "
     "fi\ndone\n"},
    {"json", "{\n  \"a\": [1, 2, {\"b\": null}],\n  \"c\": \"text\",\n  \"d\": true\n}\n"},
};
const size_t syntax_edits_nseeds = sizeof(syntax_edits_seeds) / sizeof(syntax_edits_seeds[0]);

/* Inserted fragments: brackets, quotes, newlines and indentation, keywords,
 * identifiers; what typing and pasting produce. */
static const char *const frags[] = {
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "\n",
    "\n    ",
    " ",
    "\t",
    "x",
    "42",
    ";",
    ",",
    ":",
    "\"",
    "'",
    "`",
    "if ",
    "return ",
    "else",
    "end",
    "fn",
    "def ",
    "/*",
    "*/",
    "//",
    "#",
    "--",
    "foo(bar)",
    "=",
    "+",
    "<",
    ">",
    "\\",
    "\xc3\xa9",
    "\xe2\x96\x88",
    "\r\n",
    "x = [1, 2]\n",
};

static lsp_point point_at(const char *s, size_t off) {
    lsp_point p = {0, 0};
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n') {
            p.row++;
            p.column = 0;
        } else {
            p.column++;
        }
    }
    return p;
}

base_status syntax_edits_run(const char *lang, const char *text, size_t len, base_rng *rng,
                             int rounds, bool only_clean, size_t *mismatches) {
    base_status st = BASE_OK;
    base_buf doc;
    base_buf_init(&doc);
    ifl_tree *t = ifl_tree_new(lang, &st);
    ifl_tree *fresh = NULL;
    if (!t)
        goto done;
    if ((st = base_buf_append(&doc, text, len)) != BASE_OK)
        goto done;
    if ((st = ifl_tree_update(t, doc.data, doc.len)) != BASE_OK)
        goto done;
    for (int r = 0; r < rounds; r++) {
        /* One to three edits, then a lazy reparse and a comparison. */
        int batch = 1 + (int)(base_rng_next(rng) % 3);
        for (int k = 0; k < batch; k++) {
            size_t start = doc.len ? (size_t)(base_rng_next(rng) % (doc.len + 1)) : 0;
            size_t del = (size_t)(base_rng_next(rng) % 4);
            if (base_rng_next(rng) % 4 == 0)
                del = 0;
            if (start + del > doc.len)
                del = doc.len - start;
            const char *ins = "";
            if (base_rng_next(rng) % 5 != 0)
                ins = frags[base_rng_next(rng) % (sizeof(frags) / sizeof(frags[0]))];
            size_t ins_len = strlen(ins);
            lsp_edit_event ev;
            ev.start_byte = start;
            ev.old_end_byte = start + del;
            ev.new_end_byte = start + ins_len;
            ev.start_point = point_at(doc.data, start);
            ev.old_end_point = point_at(doc.data, start + del);
            if ((st = base_buf_splice(&doc, start, del, ins, ins_len)) != BASE_OK)
                goto done;
            ev.new_end_point = point_at(doc.data, start + ins_len);
            ifl_tree_edit(t, &ev);
        }
        char *a = ifl_tree_sexp(t, doc.data, doc.len);
        fresh = ifl_tree_new(lang, &st);
        char *b = fresh ? ifl_tree_sexp(fresh, doc.data, doc.len) : NULL;
        bool clean = fresh && ifl_tree_error_count(fresh, doc.data, doc.len) == 0;
        ifl_tree_free(fresh);
        fresh = NULL;
        if (!a || !b) {
            free(a);
            free(b);
            st = BASE_ERR_NOMEM;
            goto done;
        }
        if (strcmp(a, b) != 0 && (clean || !only_clean)) {
            if (*mismatches == 0)
                fprintf(stderr,
                        "%s: round %d: incremental tree differs from a fresh parse\n"
                        "text:\n%s\nincremental: %s\nfresh:       %s\n",
                        lang, r, doc.data, a, b);
            (*mismatches)++;
        }
        free(a);
        free(b);
    }
done:
    ifl_tree_free(t);
    base_buf_deinit(&doc);
    return st;
}
