;; Span location (infill/syntax.c): @comment and @string mark where a completion
;; stays short and single-line; @body marks nodes whose children are statements
;; or members, i.e. where an empty line starts a block-shaped multi-line hole.
[(line_comment) (block_comment)] @comment
[(string_literal) (character_literal)] @string
[(block) (class_body) (interface_body) (enum_body) (switch_block) (constructor_body)
 (annotation_type_body)] @body
