package handlers_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// mcpAnnotations lists the tools of session by name with their annotations.
func mcpAnnotations(t *testing.T, session *mcp.ClientSession) map[string]*mcp.ToolAnnotations {
	t.Helper()
	res, err := session.ListTools(context.Background(), nil)
	require.NoError(t, err)
	out := map[string]*mcp.ToolAnnotations{}
	for _, tool := range res.Tools {
		require.NotNil(t, tool.Annotations, tool.Name)
		require.NotNil(t, tool.Annotations.DestructiveHint, "%s: MCP takes a tool without destructiveHint as destructive", tool.Name)
		require.NotNil(t, tool.Annotations.OpenWorldHint, "%s: MCP takes a tool without openWorldHint as open world", tool.Name)
		out[tool.Name] = tool.Annotations
	}
	return out
}

func TestMCPToolsListTheHintsTheContractDeclares(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")

	// A read-only key is offered the POSTs that only read, as reads, and nothing else.
	reader, err := mcpConnect(t, env, scopedKey(t, env, boot.OrganizationID, auth.ReadOnly))
	require.NoError(t, err)
	read := mcpAnnotations(t, reader)
	for _, name := range []string{"contacts_search", "campaigns_estimate", "campaigns_template_preview", "campaigns_validate",
		"mailboxes_verify_address", "mailboxes_list"} {
		require.Contains(t, read, name)
		require.True(t, read[name].ReadOnlyHint, name)
		require.False(t, *read[name].DestructiveHint, name)
		require.True(t, read[name].IdempotentHint, name)
	}
	for name, hints := range read {
		require.True(t, hints.ReadOnlyHint, "%s: a read-only key may call it, so it must change nothing", name)
	}

	full, err := mcpConnect(t, env, boot.APIKey)
	require.NoError(t, err)
	all := mcpAnnotations(t, full)
	for name, want := range map[string][3]bool{ // read-only, destructive, idempotent
		"contacts_search":        {true, false, true},
		"segments_delete":        {false, true, true},
		"contacts_delete":        {false, true, true},
		"segments_create":        {false, false, false},
		"mailboxes_send":         {false, false, false},
		"contacts_update":        {false, true, true},
		"campaigns_start":        {false, false, true},
		"runs_create":            {false, false, true},
		"mailboxes_hold":         {false, false, true},
		"webhooks_rotate_secret": {false, true, false},
	} {
		require.Contains(t, all, name)
		got := [3]bool{all[name].ReadOnlyHint, *all[name].DestructiveHint, all[name].IdempotentHint}
		require.Equal(t, want, got, name)
	}
	require.Contains(t, all, "whoami")
	require.True(t, all["whoami"].ReadOnlyHint)
}

func TestMCPToolsListShowsOpenWorldForToolsThatReachPeopleOrOtherSystemsAndClosedForReads(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	full, err := mcpConnect(t, env, boot.APIKey)
	require.NoError(t, err)
	all := mcpAnnotations(t, full)
	// Tools that mail people, dial a mail server, look up DNS or call another service.
	for _, name := range []string{"mailboxes_send", "unibox_reply", "unibox_compose", "campaigns_start",
		"campaigns_send_test_email", "mailboxes_warmup_start", "webhooks_verify", "mailboxes_test", "mailboxes_verify_address",
		"mailboxes_auth_check"} {
		require.Contains(t, all, name)
		require.True(t, *all[name].OpenWorldHint, "%s reaches outside Outflow", name)
	}
	// Reads and writes of Outflow's own data.
	for _, name := range []string{"whoami", "mailboxes_list", "mailboxes_get", "contacts_get", "contacts_search", "campaigns_list",
		"segments_list", "webhooks_list", "audit_logs_list", "segments_create", "contacts_delete", "campaigns_stop",
		"mailboxes_warmup_pause", "webhooks_rotate_secret"} {
		require.Contains(t, all, name)
		require.False(t, *all[name].OpenWorldHint, "%s stays inside Outflow", name)
	}
	// A read-only tool may reach outside: the read-only flag and the open-world flag are independent.
	require.True(t, all["mailboxes_verify_address"].ReadOnlyHint)
}
