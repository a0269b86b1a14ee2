package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// echoTool returns its arguments; it needs scope and takes one required string and an optional bounded
// integer.
func echoTool(name string, scope auth.Permission, sessions bool) tools.Tool {
	return tools.Tool{
		Name: name, Title: "Echo", Description: "Echoes its arguments.", Scope: scope, Sessions: sessions,
		Hints: tools.Hints{ReadOnly: true, Idempotent: true},
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"text":  {Type: "string"},
				"count": {Type: "integer", Minimum: ptr(1.0), Maximum: ptr(3.0)},
			},
			Required:             []string{"text"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
		Run: func(_ context.Context, args json.RawMessage) (any, error) { return args, nil },
	}
}

func ptr[T any](v T) *T { return &v }

func noArgs() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

func key(perms auth.Permission) context.Context {
	return auth.WithPrincipal(context.Background(), &auth.Principal{Kind: auth.KindAPIKey, CredentialID: uuid.New(),
		OrganizationID: uuid.New(), Permissions: perms})
}

func session() context.Context {
	return auth.WithPrincipal(context.Background(), &auth.Principal{Kind: auth.KindSession, CredentialID: uuid.New(),
		OrganizationID: uuid.New(), UserID: uuid.New(), OrgPermissions: auth.AllOrgPermissions})
}

// requireAPIError checks err is an *apierror.Error with status and code.
func requireAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var e *apierror.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, status, e.Status, e.Message)
	require.Equal(t, code, e.Code)
}

func TestRegisterRefusesWiringMistakes(t *testing.T) {
	t.Parallel()
	run := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		tool tools.Tool
	}{
		{"camel case", tools.Tool{Name: "apiKeysList", InputSchema: noArgs(), Run: run}},
		{"spaces", tools.Tool{Name: "api keys list", InputSchema: noArgs(), Run: run}},
		{"doubled separator", tools.Tool{Name: "api__keys", InputSchema: noArgs(), Run: run}},
		{"leading underscore", tools.Tool{Name: "_list", InputSchema: noArgs(), Run: run}},
		{"empty", tools.Tool{Name: "", InputSchema: noArgs(), Run: run}},
		{"no run", tools.Tool{Name: "no_run", InputSchema: noArgs()}},
		{"no schema", tools.Tool{Name: "no_schema", Run: run}},
		{"array schema", tools.Tool{Name: "array_schema", InputSchema: &jsonschema.Schema{Type: "array"}, Run: run}},
		{"read-only yet destructive", tools.Tool{Name: "wipe", InputSchema: noArgs(), Run: run,
			Hints: tools.Hints{ReadOnly: true, Destructive: true, Idempotent: true}}},
		{"read-only yet not idempotent", tools.Tool{Name: "count_up", InputSchema: noArgs(), Run: run,
			Hints: tools.Hints{ReadOnly: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Error(t, tools.NewRegistry().Register(tc.tool))
		})
	}

	r := tools.NewRegistry()
	require.NoError(t, r.Register(echoTool("echo", 0, false)))
	require.ErrorContains(t, r.Register(echoTool("echo", 0, false)), "twice")
}

func TestListFiltersByScopeAndSessions(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	require.NoError(t, r.Register(
		echoTool("zeta_open", 0, true),
		echoTool("alpha_audit", auth.ReadAuditLogs, true),
		echoTool("keys_only", auth.APIKeys|auth.ReadAuditLogs, false),
	))
	names := func(tools []tools.Tool) []string {
		out := []string{}
		for _, t := range tools {
			out = append(out, t.Name)
		}
		return out
	}
	require.Equal(t, []string{"alpha_audit", "keys_only", "zeta_open"}, names(r.List(auth.PrincipalFrom(key(auth.FullAccess)))), "sorted by name")
	require.Equal(t, []string{"alpha_audit", "zeta_open"}, names(r.List(auth.PrincipalFrom(key(auth.ReadAuditLogs)))))
	require.Equal(t, []string{"zeta_open"}, names(r.List(auth.PrincipalFrom(key(auth.APIKeys)))), "every bit of the scope is needed")
	require.Equal(t, []string{"alpha_audit", "zeta_open"}, names(r.List(auth.PrincipalFrom(session()))), "sessions see the tools open to them")
	require.Empty(t, r.List(nil))
}

func TestCallChecksCallerAndArguments(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	require.NoError(t, r.Register(echoTool("echo", auth.ReadAuditLogs, false)))
	ctx := key(auth.ReadAuditLogs)

	res, err := r.Call(ctx, "echo", json.RawMessage(`{"text": "hi", "count": 2}`))
	require.NoError(t, err)
	require.False(t, res.Accepted)
	require.JSONEq(t, `{"text": "hi", "count": 2}`, string(res.Value.(json.RawMessage)))

	_, err = r.Call(ctx, "nope", nil)
	requireAPIError(t, err, http.StatusNotFound, "tool_not_found")
	_, err = r.Call(context.Background(), "echo", json.RawMessage(`{"text": "hi"}`))
	requireAPIError(t, err, http.StatusUnauthorized, "missing_credential")
	_, err = r.Call(key(auth.APIKeys), "echo", json.RawMessage(`{"text": "hi"}`))
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	_, err = r.Call(session(), "echo", json.RawMessage(`{"text": "hi"}`))
	requireAPIError(t, err, http.StatusForbidden, "session_not_allowed")

	for name, args := range map[string]string{
		"missing required": `{}`,
		"no arguments":     ``,
		"wrong type":       `{"text": 5}`,
		"out of range":     `{"text": "hi", "count": 9}`,
		"unknown argument": `{"text": "hi", "color": "red"}`,
		"not an object":    `["hi"]`,
		"not JSON":         `{"text": `,
	} {
		_, err := r.Call(ctx, "echo", json.RawMessage(args))
		requireAPIError(t, err, http.StatusBadRequest, "invalid_arguments")
		require.NotEmpty(t, name)
	}
}

func TestCallMapsToolOutcomes(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	tool := func(name string, run func(context.Context, json.RawMessage) (any, error)) tools.Tool {
		return tools.Tool{Name: name, InputSchema: noArgs(), Run: run}
	}
	var seen *auth.Principal
	require.NoError(t, r.Register(
		tool("conflict", func(context.Context, json.RawMessage) (any, error) {
			return nil, apierror.Conflict("still_referenced", "Detach it first.")
		}),
		tool("broken", func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("pq: relation secret_table does not exist")
		}),
		tool("held", func(context.Context, json.RawMessage) (any, error) {
			return tools.Accepted{Value: map[string]string{"approval_id": "a1"}}, nil
		}),
		tool("who", func(ctx context.Context, args json.RawMessage) (any, error) {
			seen = auth.PrincipalFrom(ctx)
			return string(args), nil
		}),
	))
	ctx := key(0)

	_, err := r.Call(ctx, "conflict", nil)
	requireAPIError(t, err, http.StatusConflict, "still_referenced")
	_, err = r.Call(ctx, "broken", nil)
	requireAPIError(t, err, http.StatusInternalServerError, "internal_error")
	require.NotContains(t, apierror.From(err).Message, "secret_table", "internals stay in the log")

	res, err := r.Call(ctx, "held", nil)
	require.NoError(t, err)
	require.True(t, res.Accepted)
	require.Equal(t, map[string]string{"approval_id": "a1"}, res.Value)

	res, err = r.Call(ctx, "who", json.RawMessage(" null "))
	require.NoError(t, err)
	require.Equal(t, "{}", res.Value, "absent arguments reach the tool as an empty object")
	require.Same(t, auth.PrincipalFrom(ctx), seen)
}

// errorOf returns err as an *apierror.Error.
func errorOf(t *testing.T, err error) *apierror.Error {
	t.Helper()
	var e *apierror.Error
	require.ErrorAs(t, err, &e)
	return e
}

func TestListedToolsCarryTheirSchemaAsJSON(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	tool := echoTool("echo", 0, false)
	require.NoError(t, r.Register(tool))
	want, err := json.Marshal(tool.InputSchema)
	require.NoError(t, err)
	listed := r.List(auth.PrincipalFrom(key(0)))
	require.Len(t, listed, 1)
	require.JSONEq(t, string(want), string(listed[0].SchemaJSON()))
	require.JSONEq(t, string(want), string(tool.SchemaJSON()), "an unregistered tool encodes its schema when asked")
}
