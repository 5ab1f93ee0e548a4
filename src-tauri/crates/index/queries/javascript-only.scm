; What only JavaScript's grammar has (TypeScript names a superclass in an extends clause).
(class_heritage (identifier) @reference)
