;; Span location (infill/syntax.c): @comment and @string mark where a completion
;; stays short and single-line; @body marks nodes whose children are statements
;; or members, i.e. where an empty line starts a block-shaped multi-line hole.
[(line_comment) (block_comment)] @comment
[(string_literal) (raw_string_literal) (char_literal)] @string
[(block) (declaration_list) (field_declaration_list) (match_block) (enum_variant_list)
 (field_initializer_list)] @body
