package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// agentTools are tools an API key holding every scope must see: whoami, the seven that shipped before tools
// were derived from the contract, and a sample of the derived ones across the areas agents work in.
var agentTools = []string{"whoami", "api_keys_get", "api_keys_list", "api_keys_permissions", "api_keys_usage_summary",
	"audit_logs_list", "teams_get", "teams_list",
	"mailboxes_list", "mailboxes_get", "mailboxes_send", "contacts_search", "contacts_create", "contacts_update",
	"segments_list", "segments_create", "deliverability-ops_list_suppressions", "deliverability-ops_add_suppressions",
	"campaigns_list", "campaigns_create", "campaigns_create_step", "campaigns_update_step", "campaigns_start",
	"unibox_list", "unibox_compose", "unibox_reply", "webhooks_list", "webhooks_create"}

// notAgentTools are operations that are never tools: managing who may act (keys, members, OAuth, sign-in,
// policies, approvals), files, feeds from providers, and the registry itself.
var notAgentTools = []string{"api-keys_create", "api_keys_create", "api-keys_revoke", "organizations_create_team",
	"organizations_create_invitation", "oauth_applications_rotate_webhook_secret", "auth_get_me", "auth_login_start", "oauth_applications_create", "agent_policies_create",
	"agent_policies_list", "approvals_list", "approvals_decide", "mailboxes_oauth_cli_start", "contacts_export",
	"contacts_import_preview", "contacts_import_commit", "campaigns_upload_attachment", "deliverability-ops_ingest_event",
	"agent_tools_list", "agent_tools_call", "mcp_post_message", "system_get_readiness"}

// restTool is a tool as GET /ai/tools describes it.
type restTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Permissions uint64          `json:"permissions"`
	Scopes      []string        `json:"scopes"`
	Sessions    bool            `json:"sessions"`
	ReadOnly    bool            `json:"read_only"`
	Destructive bool            `json:"destructive"`
	Idempotent  bool            `json:"idempotent"`
	OpenWorld   bool            `json:"open_world"`
	Operation   *struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Path   string `json:"path"`
	} `json:"operation"`
}

func restTools(t *testing.T, c *api.Client) map[string]restTool {
	t.Helper()
	res, err := c.AgentToolsList(context.Background())
	require.NoError(t, err)
	var tools []restTool
	require.NoError(t, json.Unmarshal(res["tools"], &tools))
	out := map[string]restTool{}
	var names []string
	for _, tool := range tools {
		out[tool.Name] = tool
		names = append(names, tool.Name)
	}
	require.IsIncreasing(t, names, "sorted by name")
	return out
}

func toolNames(tools map[string]restTool) []string {
	return slices.Sorted(maps.Keys(tools))
}

// restCall calls a tool over REST with args (a JSON object) and decodes the result into out; status is
// "completed" (200) or "accepted" (202).
func restCall(t *testing.T, c *api.Client, name, args string, out any) (status string, err error) {
	t.Helper()
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(args), &raw))
	arguments := api.AgentToolsCallReqArguments{}
	for k, v := range raw {
		arguments[k] = jx.Raw(v)
	}
	res, err := c.AgentToolsCall(context.Background(), &api.AgentToolsCallReq{Arguments: arguments}, api.AgentToolsCallParams{Name: name})
	if err != nil {
		return "", err
	}
	var body map[string]jx.Raw
	switch res := res.(type) {
	case *api.AgentToolsCallOK:
		body = *res
	case *api.AgentToolsCallAccepted:
		body = *res
	default:
		t.Fatalf("unexpected answer %T", res)
	}
	require.JSONEq(t, `"`+name+`"`, string(body["tool"]))
	require.NoError(t, json.Unmarshal(body["status"], &status))
	if out != nil {
		require.NoError(t, json.Unmarshal(body["result"], out))
	}
	return status, nil
}

// whoamiResult is what the whoami tool answers.
type whoamiResult struct {
	Organization *struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	} `json:"organization"`
	Credential struct {
		Kind string    `json:"kind"`
		ID   uuid.UUID `json:"id"`
	} `json:"credential"`
	UserID         *uuid.UUID `json:"user_id"`
	Permissions    *uint64    `json:"permissions"`
	Scopes         []string   `json:"scopes"`
	Role           string     `json:"role"`
	OrgPermissions []string   `json:"org_permissions"`
	Tools          []string   `json:"tools"`
}

func TestAgentToolsListFollowsScopes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")

	full := restTools(t, env.Client(t, boot.APIKey))
	for _, name := range agentTools {
		require.Contains(t, full, name)
	}
	for _, name := range notAgentTools {
		require.NotContains(t, full, name)
	}
	audit := full["audit_logs_list"]
	require.Equal(t, uint64(auth.ReadAuditLogs), audit.Permissions)
	require.Equal(t, []string{"READ_AUDIT_LOGS"}, audit.Scopes)
	require.True(t, audit.Sessions)
	require.True(t, audit.ReadOnly)
	require.False(t, audit.OpenWorld, "it reads Outflow's own log")
	require.Equal(t, "List audit log entries", audit.Title)
	require.Contains(t, audit.Description, "newest first")
	require.Equal(t, "analytics_audit_logs_list", audit.Operation.ID)
	require.Equal(t, "GET", audit.Operation.Method)
	require.Equal(t, "/audit-logs", audit.Operation.Path)
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type    string   `json:"type"`
			Minimum *float64 `json:"minimum"`
			Maximum *float64 `json:"maximum"`
		} `json:"properties"`
		Required             []string `json:"required"`
		AdditionalProperties *bool    `json:"additionalProperties"`
	}
	require.NoError(t, json.Unmarshal(audit.InputSchema, &schema))
	require.Equal(t, "object", schema.Type)
	require.Contains(t, schema.Properties, "entity_type")
	require.Equal(t, 10.0, *schema.Properties["limit"].Minimum, "the contract's bounds")
	require.Equal(t, 200.0, *schema.Properties["limit"].Maximum)
	require.False(t, *schema.AdditionalProperties)

	send := full["mailboxes_send"]
	require.Equal(t, []string{"SEND_DIRECT_EMAIL"}, send.Scopes)
	require.False(t, send.ReadOnly)
	require.True(t, send.OpenWorld, "it mails people")
	require.Equal(t, "/emails/{id}/send", send.Operation.Path)
	schema.Required = nil
	require.NoError(t, json.Unmarshal(send.InputSchema, &schema))
	require.Subset(t, schema.Required, []string{"id", "to", "subject"}, "the path parameter and the body's required fields")
	require.Contains(t, schema.Properties, "idempotency_key")
	require.Equal(t, []string{"API_KEYS"}, full["api_keys_list"].Scopes)
	require.Equal(t, []string{"READ_CRM"}, full["teams_list"].Scopes)
	require.Equal(t, []string{}, full["whoami"].Scopes, "any credential may ask who it is")
	require.Nil(t, full["whoami"].Operation)

	require.Equal(t, []string{}, full["agent_policies_get_effective"].Scopes, "any credential may read its own policy")
	narrow := restTools(t, env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadAuditLogs)))
	require.Equal(t, []string{"agent_policies_get_effective", "audit_logs_list", "whoami"}, toolNames(narrow))
	hooks := restTools(t, env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.Webhooks)))
	require.Contains(t, hooks, "webhooks_create")
	for name := range hooks {
		require.True(t, name == "whoami" || name == "agent_policies_get_effective" || strings.HasPrefix(name, "webhooks_"), name)
	}

	// A read-only key sees the reads and none of the writes.
	reader := restTools(t, env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadOnly)))
	for _, name := range []string{"mailboxes_list", "contacts_search", "campaigns_list", "unibox_list", "audit_logs_list"} {
		require.Contains(t, reader, name)
	}
	for _, name := range []string{"mailboxes_send", "unibox_compose", "unibox_reply", "contacts_create", "campaigns_create", "segments_create", "webhooks_create"} {
		require.NotContains(t, reader, name)
	}
	for name, tool := range reader {
		require.Zero(t, auth.Permission(tool.Permissions)&^auth.ReadOnly, name)
	}

	ada := orgSignUp(t, env, "ada@example.com")
	require.Equal(t, toolNames(full), toolNames(restTools(t, ada.client)), "sessions may call every tool of an operation open to them")

	_, err := env.Client(t, "").AgentToolsList(context.Background())
	requireAPIError(t, err, http.StatusUnauthorized, "missing_credential")
}

func TestAgentToolsCallRunsTheOperations(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	full := env.Client(t, boot.APIKey)
	team, err := full.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Sales"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	narrowKey := scopedKey(t, env, boot.OrganizationID, auth.ReadAuditLogs)
	narrow := env.Client(t, narrowKey)

	var me whoamiResult
	status, err := restCall(t, narrow, "whoami", `{}`, &me)
	require.NoError(t, err)
	require.Equal(t, "completed", status)
	require.Equal(t, boot.OrganizationID, me.Organization.ID)
	require.Equal(t, "acme", me.Organization.Name)
	require.Equal(t, "api_key", me.Credential.Kind)
	require.Equal(t, uint64(auth.ReadAuditLogs), *me.Permissions)
	require.Equal(t, []string{"READ_AUDIT_LOGS"}, me.Scopes)
	require.Equal(t, []string{"agent_policies_get_effective", "audit_logs_list", "whoami"}, me.Tools)

	var entries api.AuditLogList
	_, err = restCall(t, narrow, "audit_logs_list", `{"limit": 10, "entity_type": "team"}`, &entries)
	require.NoError(t, err)
	require.Len(t, entries.Data, 1)
	require.Equal(t, "team.created", auditEvent(entries.Data[0]))
	require.Equal(t, api.NewOptUUID(team.ID), entries.Data[0].EntityID)
	_, err = restCall(t, narrow, "audit_logs_list", `{"date": "2020-01-01"}`, &entries)
	require.NoError(t, err)
	require.Empty(t, entries.Data)

	var teams api.TeamCollection
	_, err = restCall(t, full, "teams_list", `{}`, &teams)
	require.NoError(t, err)
	require.Len(t, teams.Data, 1)
	var got api.Team
	_, err = restCall(t, full, "teams_get", `{"id": "`+team.ID.String()+`"}`, &got)
	require.NoError(t, err)
	require.Equal(t, "Sales", got.Name)
	var keys api.APIKeyList
	_, err = restCall(t, full, "api_keys_list", `{"limit": 5}`, &keys)
	require.NoError(t, err)
	require.NotEmpty(t, keys.Data)

	// A write runs the operation's handler, idempotency included: the same key answers the first result.
	var created, again api.Segment
	status, err = restCall(t, full, "segments_create", `{"name": "VIP", "idempotency_key": "seg-1"}`, &created)
	require.NoError(t, err)
	require.Equal(t, "completed", status)
	_, err = restCall(t, full, "segments_create", `{"name": "VIP", "idempotency_key": "seg-1"}`, &again)
	require.NoError(t, err)
	require.Equal(t, created.ID, again.ID)
	segments, err := env.Client(t, boot.APIKey).SegmentsList(ctx, api.SegmentsListParams{})
	require.NoError(t, err)
	require.Len(t, segments.Data, 1)
	require.Equal(t, "VIP", segments.Data[0].Name)
	_, err = restCall(t, full, "segments_create", `{"name": "Other", "idempotency_key": "seg-1"}`, nil)
	requireAPIError(t, err, http.StatusUnprocessableEntity, "idempotency_key_reused")

	// Sessions run the same tools under their organization permissions.
	ada := orgSignUp(t, env, "ada@example.com")
	me = whoamiResult{}
	_, err = restCall(t, ada.client, "whoami", `{}`, &me)
	require.NoError(t, err)
	require.Equal(t, "session", me.Credential.Kind)
	require.Equal(t, ada.home, me.Organization.ID)
	require.Equal(t, "owner", me.Role)
	require.Contains(t, me.OrgPermissions, "view_analytics")
	require.Nil(t, me.Permissions)
	_, err = restCall(t, ada.client, "audit_logs_list", `{}`, &entries)
	require.NoError(t, err)
	for _, e := range entries.Data {
		require.Equal(t, ada.home, e.OrgID, "a session sees its own organization only")
	}

	for _, tc := range []struct {
		client *api.Client
		tool   string
		args   string
		status int
		code   string
	}{
		{narrow, "teams_list", `{}`, http.StatusForbidden, "missing_scope"},
		{narrow, "api_keys_list", `{}`, http.StatusForbidden, "missing_scope"},
		{narrow, "no_such_tool", `{}`, http.StatusNotFound, "tool_not_found"},
		{narrow, "audit_logs_list", `{"limit": 9}`, http.StatusBadRequest, "invalid_arguments"},
		{narrow, "audit_logs_list", `{"limit": "ten"}`, http.StatusBadRequest, "invalid_arguments"},
		{narrow, "audit_logs_list", `{"colour": "red"}`, http.StatusBadRequest, "invalid_arguments"},
		// Refused by the operation itself, as the REST call is.
		{narrow, "audit_logs_list", `{"cursor": "not-a-uuid"}`, http.StatusBadRequest, "invalid_parameter"},
		{narrow, "audit_logs_list", `{"date": "yesterday"}`, http.StatusBadRequest, "invalid_parameter"},
		{narrow, "audit_logs_list", `{"cursor": "` + uuid.NewString() + `"}`, http.StatusBadRequest, "invalid_cursor"},
		{full, "teams_get", `{}`, http.StatusBadRequest, "invalid_arguments"},
		{full, "teams_get", `{"id": "` + uuid.NewString() + `"}`, http.StatusNotFound, "not_found"},
	} {
		_, err := restCall(t, tc.client, tc.tool, tc.args, nil)
		requireAPIError(t, err, tc.status, tc.code)
	}

	// A body without arguments is refused by the contract itself.
	resp := env.Do(t, http.MethodPost, "/v1/ai/tools/whoami/call", narrowKey, strings.NewReader(`{}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	_, err = restCall(t, env.Client(t, ""), "whoami", `{}`, nil)
	requireAPIError(t, err, http.StatusUnauthorized, "missing_credential")
}

// TestEveryAgentToolRunsAnImplementedOperation calls the operation of every tool a full-access key sees with
// placeholder ids and an empty body: each must be refused or answered by its handler, never by the 501 of an
// operation that has not shipped.
func TestEveryAgentToolRunsAnImplementedOperation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	tools := restTools(t, env.Client(t, boot.APIKey))
	require.Greater(t, len(tools), 100)
	param := regexp.MustCompile(`\{[^}]+\}`)
	for name, tool := range tools {
		if tool.Operation == nil {
			require.Equal(t, "whoami", name)
			continue
		}
		path := "/v1" + param.ReplaceAllStringFunc(tool.Operation.Path, func(string) string { return uuid.NewString() })
		var body io.Reader
		header := http.Header{}
		if tool.Operation.Method != http.MethodGet {
			body, header = strings.NewReader(`{}`), http.Header{"Content-Type": {"application/json"}}
		}
		resp := env.Do(t, tool.Operation.Method, path, boot.APIKey, body, header)
		require.NotEqual(t, http.StatusNotImplemented, resp.StatusCode, "%s (%s %s)", name, tool.Operation.Method, path)
	}
}

// TestAToolCallCountsOnceAgainstTheRateLimit: the operation a tool runs is the caller's request already
// admitted, not a second one charged to its budget.
func TestAToolCallCountsOnceAgainstTheRateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	key := newKey(t, env.Client(t, boot.APIKey), api.CreateAPIKey{Name: "slow agent", Permissions: int64(auth.ReadContacts),
		RateLimitPerMinute: api.NewOptInt(3)})
	agent := env.Client(t, key.Secret)
	for range 3 {
		_, err := restCall(t, agent, "segments_list", `{}`, nil)
		require.NoError(t, err)
	}
	_, err := restCall(t, agent, "segments_list", `{}`, nil)
	requireAPIError(t, err, http.StatusTooManyRequests, "rate_limited")
}
