(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
; A module-level assignment: a constant when its name is in capitals (the code decides).
(module (expression_statement (assignment left: (identifier) @name)) @definition.variable)
; A class attribute (`exit_code = 2` in a class body), a member of its class.
(class_definition
  body: (block (expression_statement (assignment left: (identifier) @name)) @definition.variable))

(call function: (identifier) @reference)
(call function: (attribute attribute: (identifier) @reference))
(class_definition superclasses: (argument_list (identifier) @reference))
