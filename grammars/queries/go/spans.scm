;; Span location (infill/syntax.c): @comment and @string mark where a completion
;; stays short and single-line; @body marks nodes whose children are statements
;; or members, i.e. where an empty line starts a block-shaped multi-line hole.
(comment) @comment
[(interpreted_string_literal) (raw_string_literal) (rune_literal)] @string
[(block) (field_declaration_list) (import_spec_list) (var_spec_list)] @body
