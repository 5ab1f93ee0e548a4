; Definitions: `@definition.KIND` on the whole item, `@name` on its name.
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro

; An impl block is no definition, but it is the parent of the functions in it.
(impl_item type: (type_identifier) @scope.name) @scope
(impl_item type: (generic_type type: (type_identifier) @scope.name)) @scope
(impl_item type: (scoped_type_identifier name: (type_identifier) @scope.name)) @scope

; References: names called, and types named.
(call_expression function: (identifier) @reference)
(call_expression function: (field_expression field: (field_identifier) @reference))
(call_expression function: (scoped_identifier name: (identifier) @reference))
(macro_invocation macro: (identifier) @reference)
(type_identifier) @reference
