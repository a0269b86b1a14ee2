package contract_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/handlers/apitest"
)

// The hostile-input probe builds its requests from the contract itself: a valid-shaped body per operation
// (required fields only) and the list of every text and integer field it can reach.

// rawText is a JSON string written byte for byte (no escaping, no UTF-8 repair), to send invalid UTF-8.
type rawText []byte

// schemaDoc is the parsed contract with its $refs followed on demand.
type schemaDoc struct {
	root map[string]any
}

func (d schemaDoc) deref(n any) map[string]any {
	m, _ := n.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = d.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// schemaType is a schema's type, the first non-null one when it lists several.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return x.(string)
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

// merged returns a schema with its allOf parts folded in and its first oneOf/anyOf variant chosen.
func (d schemaDoc) merged(n any) map[string]any {
	s := d.deref(n)
	if s == nil {
		return map[string]any{}
	}
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	props := map[string]any{}
	var required []any
	add := func(part map[string]any) {
		for k, v := range part {
			switch k {
			case "properties":
				for pk, pv := range v.(map[string]any) {
					props[pk] = pv
				}
			case "required":
				required = append(required, v.([]any)...)
			default:
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	add(s)
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		parts, _ := s[key].([]any)
		for i, p := range parts {
			add(d.merged(p))
			if key != "allOf" && i == 0 {
				break
			}
		}
		delete(out, key)
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	out["required"] = required
	return out
}

// sample is a valid-shaped value of schema s: required properties only, lists with one element when they
// must not be empty, strings chosen by format and name.
func (d schemaDoc) sample(n any, name string, depth int) any {
	s := d.merged(n)
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if def, ok := s["default"]; ok && schemaType(s) != "object" && schemaType(s) != "array" {
		return def
	}
	switch schemaType(s) {
	case "object":
		obj := map[string]any{}
		if depth > 6 {
			return obj
		}
		props, _ := s["properties"].(map[string]any)
		for _, r := range s["required"].([]any) {
			if p, ok := props[r.(string)]; ok {
				obj[r.(string)] = d.sample(p, r.(string), depth+1)
			}
		}
		return obj
	case "array":
		if minItems, _ := s["minItems"].(int); minItems > 0 && depth <= 6 {
			return []any{d.sample(s["items"], name, depth+1)}
		}
		return []any{}
	case "integer", "number":
		v := 1
		if m, ok := s["minimum"].(int); ok && m > v {
			v = m
		}
		if m, ok := s["maximum"].(int); ok && m < v {
			v = m
		}
		return v
	case "boolean":
		return false
	case "string":
		return sampleText(s, name)
	}
	return nil
}

// sampleText picks a string a field of that format or name accepts.
func sampleText(s map[string]any, name string) string {
	switch format, _ := s["format"].(string); format {
	case "uuid":
		return uuid.NewString()
	case "date-time":
		return "2030-01-02T09:00:00Z"
	case "date":
		return "2030-01-02"
	case "email":
		return "lead@example.com"
	case "uri":
		return "https://example.com/x"
	}
	if v := apitest.SampleString(name); v != "sample" {
		return v
	}
	if n, _ := s["minLength"].(int); n > 6 {
		return strings.Repeat("s", n)
	}
	return "sample"
}

// leaf is one string or integer field of a body, reachable through path (keys, and 0 for list elements).
type leaf struct {
	path []any
	kind string
	// wide marks a 64-bit integer (a bigint column or a bit set), which a domain rule bounds, not the decoder.
	wide bool
	// skel[i] is the value to create at path[i] when the base body lacks it.
	skel []any
}

// leaves lists the text and integer fields of schema n, required or not, into lists and nested objects.
func (d schemaDoc) leaves(n any, path, skel []any, seen map[string]bool, out *[]leaf) {
	if len(path) > 8 {
		return
	}
	if m, _ := n.(map[string]any); m != nil {
		if ref, ok := m["$ref"].(string); ok {
			if seen[ref] {
				return // a recursive schema: one level is enough
			}
			seen = maps.Clone(seen)
			seen[ref] = true
		}
	}
	s := d.merged(n)
	switch schemaType(s) {
	case "string", "integer":
		if format, _ := s["format"].(string); format == "binary" {
			return
		}
		format, _ := s["format"].(string)
		*out = append(*out, leaf{path: append([]any{}, path...), kind: schemaType(s), wide: format == "int64",
			skel: append([]any{}, skel...)})
	case "object":
		props, _ := s["properties"].(map[string]any)
		for _, k := range sortedNames(props) {
			d.leaves(props[k], append(path, k), append(skel, d.sample(props[k], k, len(path))), seen, out)
		}
	case "array":
		d.leaves(s["items"], append(path, 0), append(skel, d.sample(s["items"], "", len(path))), seen, out)
	}
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// withValue returns a deep copy of base with v at l's path, creating what lies on the way.
func withValue(base any, l leaf, v any) any {
	return setAt(deepCopy(base), l, 0, v)
}

func setAt(cur any, l leaf, i int, v any) any {
	if i == len(l.path) {
		return v
	}
	if key, ok := l.path[i].(string); ok {
		obj, ok := cur.(map[string]any)
		if !ok {
			obj = map[string]any{}
		}
		child, ok := obj[key]
		if !ok {
			child = deepCopy(l.skel[i])
		}
		obj[key] = setAt(child, l, i+1, v)
		return obj
	}
	list, _ := cur.([]any)
	if len(list) == 0 {
		list = []any{deepCopy(l.skel[i])}
	}
	list[0] = setAt(list[0], l, i+1, v)
	return list
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// encodeJSON writes v as JSON, with rawText written byte for byte.
func encodeJSON(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case rawText:
		buf.WriteByte('"')
		buf.Write(x)
		buf.WriteByte('"')
	case map[string]any:
		buf.WriteByte('{')
		for i, k := range sortedNames(x) {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeJSON(buf, k)
			buf.WriteByte(':')
			encodeJSON(buf, x[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeJSON(buf, e)
		}
		buf.WriteByte(']')
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}
