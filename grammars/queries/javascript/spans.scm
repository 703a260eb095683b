;; Span location (infill/syntax.c): @comment and @string mark where a completion
;; stays short and single-line; @body marks nodes whose children are statements
;; or members, i.e. where an empty line starts a block-shaped multi-line hole.
[(comment) (html_comment)] @comment
[(string) (template_string)] @string
[(statement_block) (class_body) (switch_body) (class_static_block)] @body
