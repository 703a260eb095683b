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

/* Several top-level constructs each (the C one inside an include guard),
 * with the places where a cut between them would be wrong: declarations over two lines, decorators,
 * comments and strings over column-0 lines, statements without semicolons. Edits move and break
 * those places. */
const syntax_edits_seed syntax_edits_multi[] = {
    {"c",
     "/* count.h */\n#ifndef COUNT_H\n#define COUNT_H\n#include <stdio.h>\n#define TWICE(x) \\\n"
     "((x) * 2)\n\nstatic int\ncount(const char *s)\n{\n"
     "    int n = 0;\n    while (*s++)\n        n++;\n    return n;\n}\n\n/* a comment\nover "
     "lines */\nstruct point {\n    int x, y;\n};\n\n#ifdef DEBUG\nint debug = 1;\n#endif\n"
     "int main(void) {\n    return count(\"x\");\n}\n#endif /* COUNT_H */\n"},
    {"cpp",
     "namespace a {\nint f(int x) { return x; }\nclass B {\npublic:\n    int g() const;\n};\n}  "
     "// namespace a\n\ntemplate <typename T>\nT twice(T x) {\n    return x + x;\n}\n\nint "
     "main() {\n    return a::f(twice(1));\n}\n"},
    {"python", "import os\n\n\n@decorator\ndef f(x):\n    return x\n\n\nDOC = \"\"\"\ntext in "
               "column 0\n\"\"\"\n\nX = [\n1,\n2]\n\n\nclass A:\n    def g(self):\n        if "
               "self:\n            pass\n        else:\n            return 1\n\n\nif X:\n    "
               "pass\nelse:\n    pass\n"},
    {"javascript",
     "const a = 1\nlet b = a\n(function () {})()\n\nfunction f(x) {\n  return x\n}\n\n/* "
     "block\ncomment */\nconst s = `template\nline`\nclass C {\n  m() { return 1 }\n}\n"},
    {"typescript",
     "interface P {\n  x: number\n}\n\ntype Q = P &\n{ y: number }\n\nexport function "
     "f(p: P): number {\n  return p.x\n}\n\nenum E {\n  A,\n  B,\n}\n"},
    {"tsx", "const A = () => <div>\ntext\n</div>\n\nexport function B() {\n  return <A />\n}\n"},
    {"go", "package main\n\nimport (\n\t\"fmt\"\n)\n\ntype T struct {\n\tx int\n}\n\nfunc (t *T) "
           "Get() int {\n\treturn t.x\n}\n\nvar s = `raw\nstring`\n\nfunc main() "
           "{\n\tfmt.Println(s)\n}\n"},
    {"rust",
     "use std::fmt;\n\n#[derive(Debug)]\nstruct P {\n    x: i32,\n}\n\nimpl P\nwhere\n    "
     "Self: Sized,\n{\n    fn get(&self) -> i32 {\n        self.x\n    }\n}\n\nconst S: &str = "
     "\"a\nb\";\n\nfn main() {\n    println!(\"{}\", S);\n}\n"},
    {"java",
     "import java.util.List;\n\nclass A {\n    int x;\n}\n\ninterface B {\n    void f();\n}\n\n"
     "enum C {\n    X, Y\n}\n"},
    {"lua",
     "local M = {}\n\n--[==[\nlong comment\n]==]\nfunction M.f(x)\n  return x\nend\n\nlocal s = "
     "[[\nlong string\n]]\nlocal t = {\nx = 1,\n}\nreturn M\n"},
    {"bash",
     "#!/bin/bash\nf() {\n  echo hi\n}\n\ncat <<EOF\ntext\nEOF\nmsg='multi\nline'\nif true; "
     "then\n  f\nfi\nx=1 \\\n  y=2\n"},
};
const size_t syntax_edits_nmulti = sizeof(syntax_edits_multi) / sizeof(syntax_edits_multi[0]);

size_t syntax_edits_segment_bytes = 0;
size_t syntax_edits_keep_bytes = IFL_TREE_KEEP_BYTES;
size_t syntax_edits_mend_bytes = IFL_TREE_MEND_BYTES;

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

size_t syntax_edits_clean_compared, syntax_edits_errorful_diffs, syntax_edits_points;
bool syntax_edits_skip_errorful;

/* Rewrites an S-expression in place so that a comment that ends a node
 * stands after it instead: `(x (y) (comment))` reads `(x (y)) (comment)`.
 * Where tree-sitter attaches a trailing comment is the one difference its
 * own incremental reparse leaves on error-free text (finding 19: one tree,
 * no segments; JavaScript's automatic semicolon, which its scanner places
 * by looking past comments, went before a `//` comment after a reparse and
 * after it in a fresh parse). Node order and every node's start are kept. */
static void hoist_trailing_comments(char *s) {
    for (bool moved = true; moved;) {
        moved = false;
        for (char *p = strstr(s, "comment))"); p; p = strstr(p + 1, "comment))")) {
            char *open = p;
            while (open > s && open[-1] != '(' && open[-1] != ' ')
                open--;
            if (open == s || open[-1] != '(' || open - 1 == s || open[-2] != ' ')
                continue;
            /* " (NAMEcomment))" -> ") (NAMEcomment)" */
            char *sp = open - 2, *end = p + 8; /* end: the second ')' */
            memmove(sp + 1, sp, (size_t)(end - sp));
            *sp = ')';
            moved = true;
        }
    }
}

/* Compares t (incremental) with a fresh parse of doc. *ref is the reference
 * tree of the caller's document, created on first use and reset before
 * every fresh parse (ifl_tree_reset parses afresh exactly as a new tree
 * does: this only saves a parser per comparison); the caller frees it, so
 * that each run allocates and frees the same (libFuzzer's leak check). */
static base_status compare_fresh(const char *lang, ifl_tree *t, ifl_tree **ref, const base_buf *doc,
                                 bool only_clean, const char *what, size_t *mismatches,
                                 bool *clean_out) {
    base_status st = BASE_OK;
    if (clean_out)
        *clean_out = false;
    if (*ref) {
        ifl_tree_reset(*ref);
    } else if ((*ref = ifl_tree_new(lang, &st)) != NULL) {
        /* The reference is always one tree for the whole buffer. */
        ifl_tree_set_segment_bytes(*ref, 0);
    }
    ifl_tree *fresh = *ref;
    bool parsed = fresh && ifl_tree_update(fresh, doc->data, doc->len) == BASE_OK;
    bool clean = parsed && ifl_tree_error_count(fresh, doc->data, doc->len) == 0;
    /* A difference on text with errors counts for nothing under only_clean:
     * with syntax_edits_skip_errorful (the fuzzer) neither S-expression is
     * then built (nor errorful_diffs counted); the edited tree is still
     * reparsed (and its errors counted), so that it goes through that state. */
    bool skip = syntax_edits_skip_errorful && only_clean && parsed && !clean;
    syntax_edits_points++;
    syntax_edits_clean_compared += clean;
    if (getenv("SYNTAX_EDITS_TRACE"))
        fprintf(stderr, "update and compare (%s), fresh parse %s\n", what,
                clean ? "error-free" : "with errors");
    if (clean_out)
        *clean_out = clean;
    if (skip) {
        st = ifl_tree_update(t, doc->data, doc->len);
        (void)ifl_tree_error_count(t, doc->data, doc->len);
        /* A grammar over its parse budget is no finding here. */
        return st == BASE_ERR_TIMEOUT ? BASE_OK : st;
    }
    /* Counted before the S-expression, which parses dropped trees again:
     * the kept counts of segments without a tree must be right. */
    st = ifl_tree_update(t, doc->data, doc->len);
    size_t errors = st == BASE_OK ? ifl_tree_error_count(t, doc->data, doc->len) : 0;
    char *a = st == BASE_OK ? ifl_tree_sexp(t, doc->data, doc->len) : NULL;
    char *b = parsed ? ifl_tree_sexp(fresh, doc->data, doc->len) : NULL;
    if (!a || !b) {
        free(a);
        free(b);
        return st != BASE_OK ? st : BASE_ERR_NOMEM;
    }
    hoist_trailing_comments(a);
    hoist_trailing_comments(b);
    /* The same tree as an error-free fresh parse has no errors. */
    bool differ = strcmp(a, b) != 0 || (clean && errors != 0);
    syntax_edits_errorful_diffs += differ && !clean;
    if (differ && getenv("SYNTAX_EDITS_TRACE"))
        fprintf(stderr, "  differs\n");
    if (differ && (clean || !only_clean)) {
        /* SYNTAX_EDITS_DUMP=FILE: the first differing text, byte for byte. */
        if (*mismatches == 0 && getenv("SYNTAX_EDITS_DUMP")) {
            FILE *f = fopen(getenv("SYNTAX_EDITS_DUMP"), "wb");
            if (f) {
                fwrite(doc->data, 1, doc->len, f);
                fclose(f);
            }
        }
        if (*mismatches == 0)
            fprintf(stderr,
                    "%s: %s: incremental tree differs from a fresh parse\n"
                    "text:\n%s\nincremental (%zu errors): %s\nfresh:       %s\n",
                    lang, what, doc->data, errors, a, b);
        (*mismatches)++;
    }
    free(a);
    free(b);
    return BASE_OK;
}

base_status syntax_edits_compare(const char *lang, ifl_tree *t, ifl_tree **ref, const base_buf *doc,
                                 bool only_clean, const char *what, size_t *mismatches,
                                 bool *clean) {
    return compare_fresh(lang, t, ref, doc, only_clean, what, mismatches, clean);
}

static base_status apply_edit(ifl_tree *t, base_buf *doc, size_t start, size_t del, const char *ins,
                              size_t ins_len) {
    lsp_edit_event ev;
    ev.start_byte = start;
    ev.old_end_byte = start + del;
    ev.new_end_byte = start + ins_len;
    ev.start_point = point_at(doc->data, start);
    ev.old_end_point = point_at(doc->data, start + del);
    base_status st = base_buf_splice(doc, start, del, ins, ins_len);
    if (st != BASE_OK)
        return st;
    ev.new_end_point = point_at(doc->data, start + ins_len);
    ifl_tree_edit(t, &ev);
    /* SYNTAX_EDITS_TRACE: every edit on stderr, to follow a finding. */
    if (getenv("SYNTAX_EDITS_TRACE"))
        fprintf(stderr, "edit at %zu: -%zu +%zu \"%.*s\"\n", start, del, ins_len, (int)ins_len,
                ins);
    return BASE_OK;
}

base_status syntax_edits_doc_open(syntax_edits_doc *e, const char *lang, const char *text,
                                  size_t len, size_t seg, size_t keep) {
    base_status st = BASE_OK;
    *e = (syntax_edits_doc){.lang = lang, .t = ifl_tree_new(lang, &st)};
    base_buf_init(&e->doc);
    if (!e->t)
        return st;
    ifl_tree_set_segment_bytes(e->t, seg);
    ifl_tree_set_keep_bytes(e->t, keep);
    st = base_buf_append(&e->doc, text, len);
    return st != BASE_OK ? st : ifl_tree_update(e->t, e->doc.data, e->doc.len);
}

base_status syntax_edits_doc_edit(syntax_edits_doc *e, size_t at, size_t del, const char *ins,
                                  size_t n, const char *what) {
    e->last_clean = false;
    base_status st = apply_edit(e->t, &e->doc, at, del, ins, n);
    return st != BASE_OK ? st : syntax_edits_doc_check(e, what, NULL);
}

base_status syntax_edits_doc_check(syntax_edits_doc *e, const char *what, bool *clean) {
    base_status st =
        compare_fresh(e->lang, e->t, &e->ref, &e->doc, true, what, &e->mismatches, &e->last_clean);
    e->compares += st == BASE_OK;
    e->clean += st == BASE_OK && e->last_clean;
    if (clean)
        *clean = e->last_clean;
    return st;
}

void syntax_edits_doc_close(syntax_edits_doc *e) {
    ifl_tree_free(e->ref);
    ifl_tree_free(e->t);
    base_buf_deinit(&e->doc);
    e->t = e->ref = NULL;
}

base_status syntax_edits_cut_compare(const char *lang, ifl_tree *whole, const char *text,
                                     size_t len, bool *clean, char **cut, char **one) {
    *clean = false;
    *cut = *one = NULL;
    ifl_tree_reset(whole);
    base_status st = ifl_tree_update(whole, text, len);
    if (st != BASE_OK || ifl_tree_error_count(whole, text, len) != 0)
        return st;
    *clean = true;
    ifl_tree *t = ifl_tree_new(lang, &st);
    if (!t)
        return st;
    ifl_tree_set_segment_bytes(t, 1);
    ifl_tree_set_mend_bytes(t, syntax_edits_mend_bytes);
    char *a = NULL, *b = NULL;
    if ((st = ifl_tree_update(t, text, len)) == BASE_OK) {
        a = ifl_tree_sexp(t, text, len);
        b = ifl_tree_sexp(whole, text, len);
        if (!a || !b)
            st = BASE_ERR_NOMEM;
    }
    ifl_tree_free(t);
    if (st == BASE_OK && strcmp(a, b) != 0) {
        *cut = a;
        *one = b;
        return BASE_OK;
    }
    free(a);
    free(b);
    return st;
}

bool syntax_edits_nth_string(const char *alpha, size_t na, size_t len, size_t code, char *out) {
    for (size_t k = 0; k < len; k++, code /= na)
        out[k] = alpha[code % na];
    return code == 0;
}

base_status syntax_edits_apply(ifl_tree *t, base_buf *doc, size_t start, size_t del,
                               const char *ins, size_t ins_len) {
    return apply_edit(t, doc, start, del, ins, ins_len);
}

base_status syntax_edits_run(const char *lang, const char *text, size_t len, base_rng *rng,
                             int rounds, bool only_clean, size_t *mismatches) {
    base_status st = BASE_OK;
    base_buf doc;
    base_buf_init(&doc);
    ifl_tree *ref = NULL;
    ifl_tree *t = ifl_tree_new(lang, &st);
    if (!t)
        goto done;
    ifl_tree_set_segment_bytes(t, syntax_edits_segment_bytes);
    ifl_tree_set_keep_bytes(t, syntax_edits_keep_bytes);
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
        if ((st = compare_fresh(lang, t, &ref, &doc, only_clean, "random edits", mismatches,
                                NULL)) != BASE_OK)
            goto done;
    }
done:
    ifl_tree_free(ref);
    ifl_tree_free(t);
    base_buf_deinit(&doc);
    return st;
}

base_status syntax_edits_retype(const char *lang, const char *text, size_t len, base_rng *rng,
                                int sessions, bool only_clean, size_t *mismatches,
                                size_t *compared) {
    base_status st = BASE_OK;
    base_buf doc;
    base_buf_init(&doc);
    ifl_tree *ref = NULL;
    ifl_tree *t = ifl_tree_new(lang, &st);
    char span[64];
    if (!t)
        goto done;
    ifl_tree_set_segment_bytes(t, syntax_edits_segment_bytes);
    ifl_tree_set_keep_bytes(t, syntax_edits_keep_bytes);
    if ((st = base_buf_append(&doc, text, len)) != BASE_OK)
        goto done;
    for (int r = 0; r < sessions && st == BASE_OK && len > 0; r++) {
        size_t start = (size_t)(base_rng_next(rng) % len);
        size_t n = 1 + (size_t)(base_rng_next(rng) % 40);
        if (start + n > len)
            n = len - start;
        memcpy(span, doc.data + start, n);
        if ((st = apply_edit(t, &doc, start, n, "", 0)) != BASE_OK)
            break;
        for (size_t k = 0; k < n && st == BASE_OK; k++) {
            st = apply_edit(t, &doc, start + k, 0, span + k, 1);
            if (st == BASE_OK && (k + 1 == n || base_rng_next(rng) % 3 == 0)) {
                (*compared)++;
                st = compare_fresh(lang, t, &ref, &doc, only_clean, "retyping", mismatches, NULL);
            }
        }
    }
done:
    ifl_tree_free(ref);
    ifl_tree_free(t);
    base_buf_deinit(&doc);
    return st;
}
