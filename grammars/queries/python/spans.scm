;; Span location (infill/syntax.c): @comment and @string mark where a completion
;; stays short and single-line; @body marks nodes whose children are statements
;; or members, i.e. where an empty line starts a block-shaped multi-line hole.
(comment) @comment
(string) @string
(block) @body
