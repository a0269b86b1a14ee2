package tools_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/outflowhq/outflow/internal/agents/tools"
)

func TestDeriveCarriesTheHintsTheContractDeclares(t *testing.T) {
	t.Parallel()
	defs := derived(t)
	require.Equal(t, tools.Hints{ReadOnly: true, Idempotent: true}, defs["segments_list"].Hints, "read_only alone implies the rest")
	require.Equal(t, tools.Hints{ReadOnly: true, Idempotent: true}, defs["teams_list"].Hints)
	require.Equal(t, tools.Hints{}, defs["mailboxes_send"].Hints)
	require.Equal(t, tools.Hints{}, defs["segments_create"].Hints)
	require.Equal(t, tools.Hints{Destructive: true, Idempotent: true}, defs["contacts_create"].Hints)
}

func TestDeriveRefusesMissingMalformedOrContradictoryHints(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ method, hints, want string }{
		"none":                             {"post", ``, "no x-agent-hints"},
		"not an object":                    {"post", `x-agent-hints: true`, "must be an object"},
		"an unknown hint":                  {"post", `x-agent-hints: {read_only: false, destructive: false, idempotent: false, open_world: true}`, "open_world"},
		"a hint that is not a boolean":     {"post", `x-agent-hints: {read_only: "yes"}`, "read_only must be true or false"},
		"no read_only":                     {"post", `x-agent-hints: {destructive: false, idempotent: true}`, "needs read_only"},
		"read-only and more":               {"post", `x-agent-hints: {read_only: true, destructive: false}`, "states read_only alone"},
		"a write without idempotent":       {"post", `x-agent-hints: {read_only: false, destructive: false}`, "states destructive and idempotent"},
		"a write without destructive":      {"patch", `x-agent-hints: {read_only: false, idempotent: true}`, "states destructive and idempotent"},
		"a GET that writes":                {"get", `x-agent-hints: {read_only: false, destructive: false, idempotent: true}`, "a GET must be read-only"},
		"a DELETE that is not destructive": {"delete", `x-agent-hints: {read_only: false, destructive: false, idempotent: true}`, "a DELETE must be destructive"},
		"a DELETE that is not idempotent":  {"delete", `x-agent-hints: {read_only: false, destructive: true, idempotent: false}`, "a DELETE must be destructive and idempotent"},
		"a read-only DELETE":               {"delete", `x-agent-hints: {read_only: true}`, "a DELETE must be destructive"},
		"a PUT that is not idempotent":     {"put", `x-agent-hints: {read_only: false, destructive: true, idempotent: false}`, "a PUT must be idempotent"},
	} {
		spec := `
paths:
  /segments/{id}:
    ` + tc.method + `:
      operationId: segments_odd
      tags: [segments]
      ` + tc.hints + `
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
`
		_, err := tools.Derive([]byte(spec))
		require.ErrorContains(t, err, "segments_odd", name)
		require.ErrorContains(t, err, tc.want, name)
	}
}

// readOnlyPOSTs are the POSTs of the contract that change nothing: they search, estimate, render, validate,
// test a connection or look an address up, and store none of it. A POST joins this list only when its handler
// stores, queues and sends nothing.
var readOnlyPOSTs = []string{
	"app_connections_test", "automations_test", "campaigns_estimate", "campaigns_template_preview", "campaigns_validate",
	"contacts_search", "crm_deals_search", "crm_deals_summary", "crm_tasks_search", "crm_tasks_summary",
	"mailboxes_test", "mailboxes_verify_address",
}

// contractOperation is what the hints are checked against: the tool's definition, the success statuses its
// operation answers with, and whether it requires an Idempotency-Key.
type contractOperation struct {
	def      tools.Definition
	statuses []string
	keyed    bool
}

// contractOperations derives the tools of the contract and reads each one's success statuses from it.
func contractOperations(t *testing.T) []contractOperation {
	t.Helper()
	spec, err := os.ReadFile("../../../openapi/openapi.yaml")
	require.NoError(t, err)
	defs, err := tools.Derive(spec)
	require.NoError(t, err)
	var doc struct {
		// Each path item: its operations by method, beside its parameters.
		Paths map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(spec, &doc))
	out := make([]contractOperation, 0, len(defs))
	for _, def := range defs {
		op := contractOperation{def: def}
		operation, _ := doc.Paths[def.Path][strings.ToLower(def.Method)].(map[string]any)
		responses, _ := operation["responses"].(map[string]any)
		for code := range responses {
			if strings.HasPrefix(code, "2") {
				op.statuses = append(op.statuses, code)
			}
		}
		require.NotEmpty(t, op.statuses, def.Name)
		var schema struct {
			Required []string `json:"required"`
		}
		require.NoError(t, yaml.Unmarshal(def.InputSchema, &schema))
		op.keyed = slices.Contains(schema.Required, tools.IdempotencyArgument)
		out = append(out, op)
	}
	return out
}

func TestEveryPOSTThatChangesNothingIsReadOnlyAndEveryDELETEDestructive(t *testing.T) {
	t.Parallel()
	ops := contractOperations(t)
	var readOnlyPosts []string
	for _, op := range ops {
		def, h := op.def, op.def.Hints
		require.Empty(t, h.Consistent(), def.Name)
		switch def.Method {
		case http.MethodGet:
			require.True(t, h.ReadOnly, "%s: a GET changes nothing", def.Name)
		case http.MethodDelete:
			require.True(t, h.Destructive && h.Idempotent && !h.ReadOnly, "%s: a DELETE removes what it names, once", def.Name)
		case http.MethodPut:
			require.True(t, h.Idempotent && !h.ReadOnly, "%s: a PUT replaces", def.Name)
		case http.MethodPatch:
			require.False(t, h.ReadOnly, "%s: a PATCH changes what it names", def.Name)
		case http.MethodPost:
			if h.ReadOnly {
				readOnlyPosts = append(readOnlyPosts, def.Name)
			}
		}
		if slices.Contains(op.statuses, "201") || slices.Contains(op.statuses, "202") {
			require.False(t, h.ReadOnly, "%s answers %v: it makes or queues something", def.Name, op.statuses)
		}
		if slices.Contains(op.statuses, "201") {
			require.Equal(t, op.keyed, h.Idempotent,
				"%s creates: idempotent exactly when the contract requires its Idempotency-Key", def.Name)
		}
		if op.keyed {
			require.True(t, h.Idempotent, "%s: a required Idempotency-Key replays the first answer to a repeat", def.Name)
		}
	}
	require.ElementsMatch(t, readOnlyPOSTs, readOnlyPosts, "the POSTs that change nothing, and only they, are read-only")
}
