package tools

import (
	"slices"
	"strings"
)

// schemaConverter turns OpenAPI 3.1 schemas into self-contained JSON Schemas (2020-12): component $refs are
// inlined, except a schema reached again while it is being inlined (a recursive one such as a nested filter
// group), which goes to $defs once and is referred to there. Keywords JSON Schema does not know (example,
// discriminator, xml, externalDocs, extensions) are dropped.
type schemaConverter struct {
	doc map[string]any
	// stack holds the components being inlined, innermost last.
	stack []string
	// recursive names the components referred to through $defs; done those already converted into defsOut.
	recursive []string
	defsOut   map[string]any
}

func newSchemaConverter(doc map[string]any) *schemaConverter {
	return &schemaConverter{doc: doc, defsOut: map[string]any{}}
}

// Keywords whose value is one schema, a list of schemas or a map of names to schemas; every other keyword's
// value is data (enum, const, default, examples, required) and is copied as it is.
var (
	oneSchema   = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	manySchema  = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	namedSchema = []string{"properties", "patternProperties", "dependentSchemas", "$defs"}
	dropped     = []string{"example", "discriminator", "xml", "externalDocs"}
)

const componentPrefix = "#/components/schemas/"

// convert returns the JSON Schema of an OpenAPI schema value (a map, or a boolean schema).
func (c *schemaConverter) convert(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if ref := stringOf(m["$ref"]); ref != "" {
		return c.ref(ref, m)
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		switch {
		case strings.HasPrefix(k, "x-") || slices.Contains(dropped, k):
		case slices.Contains(oneSchema, k):
			out[k] = c.convert(val)
		case slices.Contains(manySchema, k):
			list := sliceOf(val)
			converted := make([]any, len(list))
			for i, s := range list {
				converted[i] = c.convert(s)
			}
			out[k] = converted
		case slices.Contains(namedSchema, k):
			named := map[string]any{}
			for name, s := range mapOf(val) {
				named[name] = c.convert(s)
			}
			out[k] = named
		default:
			out[k] = val
		}
	}
	return out
}

// ref inlines the component ref names, with the keywords written beside the $ref (a description, say)
// taking precedence; a component already being inlined becomes a $ref into $defs.
func (c *schemaConverter) ref(ref string, beside map[string]any) any {
	name, ok := strings.CutPrefix(ref, componentPrefix)
	var out map[string]any
	switch {
	case !ok:
		out = mapOf(c.convert(pointer(c.doc, ref)))
	case slices.Contains(c.stack, name):
		if !slices.Contains(c.recursive, name) {
			c.recursive = append(c.recursive, name)
		}
		out = map[string]any{"$ref": "#/$defs/" + name}
	default:
		c.stack = append(c.stack, name)
		converted := mapOf(c.convert(pointer(c.doc, ref)))
		c.stack = c.stack[:len(c.stack)-1]
		out = make(map[string]any, len(converted))
		for k, v := range converted {
			out[k] = v
		}
	}
	if out == nil {
		out = map[string]any{}
	}
	siblings := map[string]any{}
	for k, v := range beside {
		if k != "$ref" {
			siblings[k] = v
		}
	}
	for k, v := range mapOf(c.convert(siblings)) {
		out[k] = v
	}
	return out
}

// defs converts the recursive components referred to through $defs (each with itself on the stack, so its
// own recursion refers back to $defs too) and returns them by name.
func (c *schemaConverter) defs() map[string]any {
	for i := 0; i < len(c.recursive); i++ {
		name := c.recursive[i]
		c.stack = []string{name}
		c.defsOut[name] = c.convert(pointer(c.doc, componentPrefix+name))
		c.stack = nil
	}
	return c.defsOut
}
