package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Definition is one tool derived from an operation of the contract (openapi/openapi.yaml): what agents see
// (name, title, description, input schema) and how a call becomes the operation's HTTP request. `make
// generate` derives them all into gen/toolspec; nothing about a tool's input is written by hand.
type Definition struct {
	// Name is the tool's name: the operation id, except for the few tools that shipped under another name.
	Name string `json:"name"`
	// OperationID is the contract's operationId of the operation the tool calls.
	OperationID string `json:"operation_id"`
	// Method and Path are the operation's HTTP method and path template as the contract writes it, below the
	// API's prefix (/emails/{id}/send; `{name}` for each path parameter).
	Method string `json:"method"`
	Path   string `json:"path"`
	// Title is the operation's summary; Description its description (the summary when it has none).
	Title       string `json:"title"`
	Description string `json:"description"`
	// Hints are what the operation does, as the contract declares it (x-agent-hints).
	Hints Hints `json:"hints"`
	// InputSchema is the JSON Schema of the arguments: the operation's path, query and Idempotency-Key
	// parameters and its JSON body's fields, with $refs resolved (inline; $defs for recursive schemas) and
	// the required lists kept. Arguments it does not name are refused.
	InputSchema json.RawMessage `json:"input_schema"`
	// Params says which arguments are parameters and where they go; every other argument is the body's.
	Params []Param `json:"params,omitempty"`
	// Body is how the remaining arguments become the JSON body (BodyNone: the operation takes none).
	Body BodyShape `json:"body,omitempty"`
	// BodyRequired is set when the operation needs a body even if no argument fills it (then `{}` is sent).
	BodyRequired bool `json:"body_required,omitempty"`
}

// Param places one argument on the request.
type Param struct {
	// Argument is the argument's name in the input schema.
	Argument string `json:"argument"`
	// In is path, query or header.
	In string `json:"in"`
	// Name is the parameter's name on the wire (the header's name for a header).
	Name string `json:"name"`
}

// BodyShape is how a tool's body arguments make the request body.
type BodyShape string

const (
	// BodyNone: the operation takes no body.
	BodyNone BodyShape = ""
	// BodyFields: the body is a JSON object whose fields are the arguments that are not parameters.
	BodyFields BodyShape = "fields"
	// BodyValue: the body is the argument named "body" (an array or a choice of shapes, which cannot be
	// spread into arguments).
	BodyValue BodyShape = "value"
)

// IdempotencyArgument is the argument carrying the Idempotency-Key header of operations that take one.
const IdempotencyArgument = "idempotency_key"

// Derive reads the contract and returns the definitions of the operations Selected admits, sorted by name.
// Every selected operation must be expressible as a tool (JSON or no body, parameters in the path, the query
// or Idempotency-Key); one that is not fails the derivation, so a contract change cannot silently drop or
// garble a tool.
func Derive(spec []byte) ([]Definition, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("tools: read the contract: %w", err)
	}
	d := deriver{doc: doc}
	var out []Definition
	paths := mapOf(doc["paths"])
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item := mapOf(paths[path])
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			op := mapOf(item[strings.ToLower(method)])
			if op == nil {
				continue
			}
			name, ok := Selected(op, item)
			if !ok {
				continue
			}
			def, ok, err := d.definition(name, method, path, item, op)
			if err != nil {
				return nil, fmt.Errorf("tools: %s %s (%s): %w", method, path, op["operationId"], err)
			}
			if ok {
				out = append(out, def)
			}
		}
	}
	slices.SortFunc(out, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// deriver turns operations of one contract into definitions.
type deriver struct {
	doc map[string]any
}

// definition derives op's tool; ok is false for an operation whose body is not JSON (file uploads) or whose
// success is not JSON (file downloads): those are not things a model can pass or read as arguments.
func (d deriver) definition(name, method, path string, item, op map[string]any) (Definition, bool, error) {
	def := Definition{Name: name, OperationID: stringOf(op["operationId"]), Method: method, Path: path,
		Title: strings.TrimSpace(stringOf(op["summary"])), Description: strings.TrimSpace(stringOf(op["description"]))}
	if def.Description == "" {
		def.Description = def.Title
	}
	if !d.answersJSON(op) {
		return def, false, nil
	}
	s := newSchemaConverter(d.doc)
	props, required := map[string]any{}, []string{}
	for _, p := range d.parameters(item, op) {
		in, wire := stringOf(p["in"]), stringOf(p["name"])
		arg := wire
		switch {
		case in == "header" && strings.EqualFold(wire, "Idempotency-Key"):
			arg = IdempotencyArgument
		case in == "path" || in == "query":
		default:
			return def, false, fmt.Errorf("parameter %s in %s cannot be a tool argument", wire, in)
		}
		schema := mapOf(s.convert(p["schema"]))
		if schema == nil {
			schema = map[string]any{}
		}
		if in == "query" && (schema["type"] == "object") {
			return def, false, fmt.Errorf("query parameter %s is an object, which a tool cannot pass", wire)
		}
		if desc := strings.TrimSpace(stringOf(p["description"])); desc != "" && schema["description"] == nil {
			schema["description"] = desc
		}
		props[arg] = schema
		if in == "path" || p["required"] == true {
			required = append(required, arg)
		}
		def.Params = append(def.Params, Param{Argument: arg, In: in, Name: wire})
	}
	if rb := d.resolve(op["requestBody"]); rb != nil {
		content := mapOf(rb["content"])
		media := mapOf(content["application/json"])
		if media == nil {
			return def, false, nil
		}
		def.BodyRequired = rb["required"] == true
		body := d.resolve(media["schema"])
		if fields := mapOf(body["properties"]); body["type"] == "object" && fields != nil && flat(body) {
			def.Body = BodyFields
			// The body's own component counts as being inlined: a field referring back to it is recursion.
			s.stack = s.stack[:0]
			if name, ok := strings.CutPrefix(stringOf(mapOf(media["schema"])["$ref"]), componentPrefix); ok {
				s.stack = append(s.stack, name)
			}
			for field, schema := range fields {
				if i := slices.IndexFunc(def.Params, func(p Param) bool { return p.Argument == field }); i >= 0 {
					if def.Params[i].In != "query" {
						return def, false, fmt.Errorf("body field %s has the name of a %s parameter", field, def.Params[i].In)
					}
					// The same input offered as a query parameter and a body field: the body's field is the tool's.
					def.Params = slices.Delete(def.Params, i, i+1)
					required = slices.DeleteFunc(required, func(r string) bool { return r == field })
				}
				props[field] = s.convert(schema)
			}
			s.stack = s.stack[:0]
			if def.BodyRequired {
				required = append(required, stringsOf(body["required"])...)
			}
		} else {
			if _, taken := props["body"]; taken {
				return def, false, fmt.Errorf("a parameter is named body, the argument that carries the request body")
			}
			def.Body = BodyValue
			props["body"] = s.convert(media["schema"])
			if def.BodyRequired {
				required = append(required, "body")
			}
		}
	}
	var err error
	if def.Hints, err = hintsOf(method, op); err != nil {
		return def, false, err
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		slices.Sort(required)
		input["required"] = slices.Compact(required)
	}
	if defs := s.defs(); len(defs) > 0 {
		input["$defs"] = defs
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return def, false, err
	}
	def.InputSchema = raw
	return def, true, nil
}

// answersJSON reports whether every success response of op is JSON or empty.
func (d deriver) answersJSON(op map[string]any) bool {
	for code, r := range mapOf(op["responses"]) {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		for media := range mapOf(d.resolve(r)["content"]) {
			if media != "application/json" {
				return false
			}
		}
	}
	return true
}

// parameters lists op's parameters, the path item's first, an operation's own replacing one of the same name
// and location.
func (d deriver) parameters(item, op map[string]any) []map[string]any {
	var out []map[string]any
	for _, list := range []any{item["parameters"], op["parameters"]} {
		for _, raw := range sliceOf(list) {
			p := d.resolve(raw)
			out = slices.DeleteFunc(out, func(q map[string]any) bool { return q["name"] == p["name"] && q["in"] == p["in"] })
			out = append(out, p)
		}
	}
	return out
}

// resolve follows a local $ref ("#/components/...") to the object it names; anything else is returned as is.
func (d deriver) resolve(v any) map[string]any {
	m := mapOf(v)
	for m != nil && m["$ref"] != nil {
		m = mapOf(pointer(d.doc, stringOf(m["$ref"])))
	}
	return m
}

// flat reports whether an object body can be spread into arguments: fields only, no composition and no
// free-form extra fields.
func flat(body map[string]any) bool {
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if", "patternProperties"} {
		if body[k] != nil {
			return false
		}
	}
	extra, ok := body["additionalProperties"]
	return !ok || extra == false
}

// pointer resolves a local JSON pointer such as "#/components/schemas/Contact" in doc (nil when it names
// nothing).
func pointer(doc map[string]any, ref string) any {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = doc
	for _, part := range strings.Split(rest, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		cur = mapOf(cur)[part]
	}
	return cur
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sliceOf(v any) []any {
	s, _ := v.([]any)
	return s
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range sliceOf(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
