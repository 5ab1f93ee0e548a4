; What TypeScript adds to JavaScript (whose query is read first).
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(function_signature name: (identifier) @name) @definition.function
(method_signature name: (property_identifier) @name) @definition.method
; A member written as a property whose type is a function (`clearQueue: () => void`) is a method
; as much as one written `clearQueue(): void`.
(property_signature
  name: (property_identifier) @name
  type: (type_annotation (function_type))) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(internal_module name: (identifier) @name) @definition.module

(type_identifier) @reference
(extends_clause value: (identifier) @reference)
