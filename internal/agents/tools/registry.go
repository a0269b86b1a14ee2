package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Tool is one thing an agent can do. Its definition (name, title, description, input schema) is what agents
// see when they list tools; Scope and Sessions decide who sees and may call it.
type Tool struct {
	// Name is the identifier agents call the tool by: the operation id of the operation it runs (lower-case
	// words joined by _ or -, area first: unibox_reply, deliverability-ops_list_suppressions); it is part of
	// the public surface, so never renamed.
	Name string
	// Title is a short human-readable label for tool pickers.
	Title string
	// Description tells a model when to use the tool and what it returns.
	Description string
	// InputSchema is the JSON Schema of the arguments object (type "object"); every call is validated
	// against it before Run sees the arguments.
	InputSchema *jsonschema.Schema
	// Scope is the permission bits an API key or OAuth token must hold, those of the route the tool mirrors
	// (0: any valid credential of the organization).
	Scope auth.Permission
	// Sessions lets signed-in people call the tool over REST as well; the operation it runs then checks
	// their organization permission, as it does for its own route.
	Sessions bool
	// Hints say what a call does (changes nothing, destroys, repeats harmlessly): MCP clients show them and
	// decide by them which calls to confirm. A tool of an operation has the contract's (Definition.Hints).
	Hints Hints
	// Run executes the tool with arguments that passed InputSchema. The caller's principal is in ctx.
	Run func(ctx context.Context, args json.RawMessage) (any, error)

	// schemaJSON is InputSchema encoded once at registration: listing tools sends every schema, and
	// encoding them anew for each list costs more than the call it answers.
	schemaJSON json.RawMessage
}

// SchemaJSON is InputSchema as JSON.
func (t Tool) SchemaJSON() json.RawMessage {
	if t.schemaJSON != nil {
		return t.schemaJSON
	}
	raw, _ := json.Marshal(t.InputSchema)
	return raw
}

// Accepted is what Run returns when the call was taken without a final result, for example an action held
// for human approval or a durable run that goes on: REST answers it with 202, MCP marks the result accepted.
type Accepted struct {
	// Value describes what was accepted (the approval or run to follow up on).
	Value any
}

// Result is the outcome of a call that did not fail.
type Result struct {
	// Value is what the tool returned, ready to encode as JSON.
	Value any
	// Accepted reports a call taken without a final result (see Accepted).
	Accepted bool
}

// Registry holds the tools of every API area that exists.
type Registry struct {
	tools map[string]registered
}

type registered struct {
	tool   Tool
	schema *jsonschema.Resolved
}

// NewRegistry returns an empty registry; the server wiring fills it.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]registered{}}
}

var toolName = regexp.MustCompile(`^[a-z][a-z0-9]*([_-][a-z0-9]+)*$`)

// Register adds tools. A malformed or duplicate name, a missing Run, hints that contradict themselves, or an
// input schema that is not an object schema or does not resolve is an error: these are wiring mistakes, and
// the server refuses to start on them.
// Registration happens while the server is wired, before it serves; List and Call only read afterwards.
func (r *Registry) Register(tools ...Tool) error {
	for _, t := range tools {
		if !toolName.MatchString(t.Name) || len(t.Name) > 64 {
			return fmt.Errorf("agent: tool name %q is not lower-case words joined by _ or -, at most 64 characters", t.Name)
		}
		if _, dup := r.tools[t.Name]; dup {
			return fmt.Errorf("agent: tool %q registered twice", t.Name)
		}
		if t.Run == nil {
			return fmt.Errorf("agent: tool %q has no Run", t.Name)
		}
		if problem := t.Hints.Consistent(); problem != "" {
			return fmt.Errorf("agent: tool %q: hints: %s", t.Name, problem)
		}
		if t.InputSchema == nil || t.InputSchema.Type != "object" {
			return fmt.Errorf("agent: tool %q: the input schema must be of type object", t.Name)
		}
		resolved, err := t.InputSchema.Resolve(nil)
		if err != nil {
			return fmt.Errorf("agent: tool %q: input schema: %w", t.Name, err)
		}
		if t.schemaJSON, err = json.Marshal(t.InputSchema); err != nil {
			return fmt.Errorf("agent: tool %q: input schema: %w", t.Name, err)
		}
		r.tools[t.Name] = registered{tool: t, schema: resolved}
	}
	return nil
}

// Allowed reports whether p may call t: API keys and OAuth tokens need every bit of its scope, sessions only
// the tools open to them.
func Allowed(p *auth.Principal, t Tool) bool {
	switch {
	case p == nil:
		return false
	case p.IsSession():
		return t.Sessions
	default:
		return p.Permissions.Has(t.Scope)
	}
}

// List returns the tools p may call, sorted by name.
func (r *Registry) List(p *auth.Principal) []Tool {
	var out []Tool
	for _, reg := range r.tools {
		if Allowed(p, reg.tool) {
			out = append(out, reg.tool)
		}
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Call runs the tool name for the principal in ctx with args (a JSON object; empty means no arguments).
// Failures are *apierror.Error values: 404 for an unknown tool, 401 without a principal, 403 when the
// principal may not call it, 400 for arguments the schema refuses; the tool's own *apierror.Error keeps its
// status and code, and any other failure is a 500 whose cause only the log sees.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	reg, ok := r.tools[name]
	if !ok {
		return Result{}, apierror.NotFound("tool_not_found", fmt.Sprintf("There is no tool named %q.", name))
	}
	p := auth.PrincipalFrom(ctx)
	switch {
	case p == nil:
		return Result{}, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	case !Allowed(p, reg.tool) && p.IsSession():
		return Result{}, apierror.Forbidden("session_not_allowed", fmt.Sprintf("The tool %s is for API keys and OAuth tokens only.", name))
	case !Allowed(p, reg.tool):
		return Result{}, apierror.Forbidden("missing_scope", fmt.Sprintf("This credential lacks a scope the tool %s needs.", name))
	}
	args, err := reg.arguments(args)
	if err != nil {
		return Result{}, err
	}
	v, err := reg.tool.Run(ctx, args)
	if err != nil {
		return Result{}, apierror.From(err)
	}
	switch a := v.(type) {
	case Accepted:
		return Result{Value: a.Value, Accepted: true}, nil
	case *Accepted:
		return Result{Value: a.Value, Accepted: true}, nil
	}
	return Result{Value: v}, nil
}

// arguments checks args against the tool's schema and returns them normalised ("{}" when none were sent).
func (reg registered) arguments(args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, invalidArguments("arguments are not valid JSON.")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, invalidArguments("arguments must be a JSON object.")
	}
	if err := reg.schema.Validate(v); err != nil {
		return nil, invalidArguments(fmt.Sprintf("arguments do not match the input schema of %s: %v", reg.tool.Name, err))
	}
	return args, nil
}

// invalidArguments is the 400 for arguments a tool cannot take.
func invalidArguments(message string) *apierror.Error {
	return apierror.BadRequest("invalid_arguments", message)
}

// InvalidArguments is the error a tool's Run returns for arguments that passed the schema but still make no
// sense (a malformed id, say), so they answer like schema failures: 400 invalid_arguments.
func InvalidArguments(message string) error {
	return invalidArguments(message)
}
