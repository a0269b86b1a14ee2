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
	require.Equal(t, tools.Hints{OpenWorld: true}, defs["mailboxes_send"].Hints)
	require.Equal(t, tools.Hints{}, defs["segments_create"].Hints, "open_world left out is false")
	require.Equal(t, tools.Hints{Destructive: true, Idempotent: true}, defs["contacts_create"].Hints)
}

// hintsOfSpec derives the one operation of a contract whose x-agent-hints line is hints.
func hintsOfSpec(method, hints string) (tools.Hints, error) {
	spec := `
paths:
  /segments/{id}:
    ` + method + `:
      operationId: segments_odd
      tags: [segments]
      ` + hints + `
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
`
	defs, err := tools.Derive([]byte(spec))
	if err != nil {
		return tools.Hints{}, err
	}
	return defs[0].Hints, nil
}

func TestDeriveReadsOpenWorldAndTakesItsAbsenceForFalse(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		method, hints string
		want          tools.Hints
	}{
		"a read without it":           {"get", `x-agent-hints: {read_only: true}`, tools.Hints{ReadOnly: true, Idempotent: true}},
		"a read that reaches outside": {"get", `x-agent-hints: {read_only: true, open_world: true}`, tools.Hints{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		"a write without it":          {"post", `x-agent-hints: {read_only: false, destructive: false, idempotent: false}`, tools.Hints{}},
		"a write that reaches outside": {"post", `x-agent-hints: {read_only: false, destructive: false, idempotent: false, open_world: true}`,
			tools.Hints{OpenWorld: true}},
		"a delete that reaches outside": {"delete", `x-agent-hints: {read_only: false, destructive: true, idempotent: true, open_world: true}`,
			tools.Hints{Destructive: true, Idempotent: true, OpenWorld: true}},
	} {
		got, err := hintsOfSpec(tc.method, tc.hints)
		require.NoError(t, err, name)
		require.Equal(t, tc.want, got, name)
	}
}

func TestDeriveRefusesMissingMalformedOrContradictoryHints(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ method, hints, want string }{
		"none":                             {"post", ``, "no x-agent-hints"},
		"not an object":                    {"post", `x-agent-hints: true`, "must be an object"},
		"an unknown hint":                  {"post", `x-agent-hints: {read_only: false, destructive: false, idempotent: false, reversible: true}`, "has reversible; it takes read_only, destructive, idempotent and open_world"},
		"a hint that is not a boolean":     {"post", `x-agent-hints: {read_only: "yes"}`, "read_only must be true or false"},
		"open_world that is not a boolean": {"post", `x-agent-hints: {read_only: false, destructive: false, idempotent: false, open_world: 1}`, "open_world must be true or false"},
		"open_world as a string":           {"get", `x-agent-hints: {read_only: true, open_world: "true"}`, "open_world must be true or false"},
		"open_world stated false":          {"post", `x-agent-hints: {read_only: false, destructive: false, idempotent: false, open_world: false}`, "open_world is stated only when true"},
		"open_world alone":                 {"post", `x-agent-hints: {open_world: true}`, "needs read_only"},
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
		_, err := hintsOfSpec(tc.method, tc.hints)
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

// mailingOperations send mail to people or set it going: a direct send, an inbox reply or new message, a
// resend, test sends, starting or resuming a campaign (also by a PATCH to active or a run), a lead, warmup,
// and every way of adding leads to a campaign that sends (the lead gate's entry points), and a product event
// resuming waiting leads.
var mailingOperations = []string{
	"mailboxes_send", "unibox_reply", "unibox_compose", "mailboxes_decide_unsettled_send",
	"campaigns_test", "campaigns_send_test_email",
	"campaigns_start", "campaigns_update", "runs_create", "campaigns_resume_lead",
	"mailboxes_warmup_start", "mailboxes_warmup_resume", "mailboxes_release",
	"contacts_create", "contacts_update", "contacts_bulk_update", "segments_members_add", "segments_update",
	"product_events_create",
}

// stoppingOperations stop, pause, hold or cancel what sends: they set nothing going, so they stay inside.
var stoppingOperations = []string{
	"campaigns_stop", "campaigns_pause_lead", "campaigns_cancel_test_run", "mailboxes_hold", "mailboxes_warmup_pause",
	"mailboxes_warmup_stop", "runs_cancel", "managed_mailboxes_cancel_order",
}

// openWorldGETs are the reads that reach outside Outflow: a DNS lookup made now (SPF/DKIM/DMARC, the
// verifier's readiness), a provider's live catalog, and a message read whose read flag is relayed to its
// mailbox's server. Every other GET reads what Outflow stores.
var openWorldGETs = []string{
	"mailboxes_auth_check", "contacts_verification_status", "mailboxes_provision_providers_list", "unibox_get",
}

// openWorldReadOnlyPOSTs are the read-only POSTs that dial, look up or ping something outside: they store
// nothing, and still leave Outflow.
var openWorldReadOnlyPOSTs = []string{"app_connections_test", "mailboxes_test", "mailboxes_verify_address"}

func TestOperationsThatMailPeopleOrCallOutAreOpenWorldAndReadsOfStoredDataAreNot(t *testing.T) {
	t.Parallel()
	byName := map[string]tools.Definition{}
	var gets, readOnlyOpen []string
	for _, op := range contractOperations(t) {
		def := op.def
		byName[def.OperationID] = def
		switch {
		case def.Method == http.MethodGet && def.Hints.OpenWorld:
			gets = append(gets, def.OperationID)
		case def.Method == http.MethodDelete:
			require.False(t, def.Hints.OpenWorld, "%s: a DELETE removes what Outflow stores", def.OperationID)
		case def.Method == http.MethodPost && def.Hints.ReadOnly && def.Hints.OpenWorld:
			readOnlyOpen = append(readOnlyOpen, def.OperationID)
		}
	}
	for _, id := range mailingOperations {
		require.Contains(t, byName, id)
		require.True(t, byName[id].Hints.OpenWorld, "%s mails people or sets mail going to them", id)
	}
	require.True(t, byName["webhooks_verify"].Hints.OpenWorld, "the webhook test POSTs a challenge to the receiver")
	require.True(t, byName["webhooks_redeliver"].Hints.OpenWorld, "a redelivery POSTs the event again")
	for _, id := range stoppingOperations {
		require.Contains(t, byName, id)
		require.False(t, byName[id].Hints.OpenWorld, "%s only stops something", id)
	}
	for _, id := range []string{"mailboxes_list", "mailboxes_get", "contacts_get", "contacts_lookup", "campaigns_list", "campaigns_get",
		"segments_list", "webhooks_list", "webhooks_list_deliveries", "unibox_list", "unibox_get_thread", "runs_get"} {
		require.Contains(t, byName, id)
		require.False(t, byName[id].Hints.OpenWorld, "%s reads what Outflow stores", id)
	}
	require.ElementsMatch(t, openWorldGETs, gets, "the GETs that reach outside, and only they, are open world")
	require.ElementsMatch(t, openWorldReadOnlyPOSTs, readOnlyOpen, "the read-only POSTs that reach outside, and only they, are open world")
	require.Subset(t, readOnlyPOSTs, openWorldReadOnlyPOSTs)
}
