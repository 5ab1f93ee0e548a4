; Read for JavaScript and, with typescript.scm, for TypeScript.
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (property_identifier) @name) @definition.method
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
(function_expression name: (identifier) @name) @definition.function
; A constant declared at the top of a module (functions were taken above).
; `const x = require(...)` only names what another module defines.
(program
  (lexical_declaration "const" (variable_declarator name: (identifier) @name value: (_)? @value)) @definition.constant
  (#not-match? @value "^require\\("))
(program
  (export_statement (lexical_declaration "const" (variable_declarator name: (identifier) @name)) @definition.constant))

(call_expression function: (identifier) @reference)
(call_expression function: (member_expression property: (property_identifier) @reference))
(new_expression constructor: (identifier) @reference)
