package handlers_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
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

// allTools is every tool the areas that exist register, sorted by name.
var allTools = []string{"api_keys_get", "api_keys_list", "api_keys_permissions", "api_keys_usage_summary",
	"audit_logs_list", "teams_get", "teams_list", "whoami"}

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

// restCall calls a tool over REST with args (a JSON object) and decodes the result into out.
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
	ok, isOK := res.(*api.AgentToolsCallOK)
	require.True(t, isOK, "200 expected, got %T", res)
	require.JSONEq(t, `"`+name+`"`, string((*ok)["tool"]))
	require.NoError(t, json.Unmarshal((*ok)["status"], &status))
	if out != nil {
		require.NoError(t, json.Unmarshal((*ok)["result"], out))
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
	require.Equal(t, allTools, toolNames(full))
	audit := full["audit_logs_list"]
	require.Equal(t, uint64(auth.ReadAuditLogs), audit.Permissions)
	require.Equal(t, []string{"READ_AUDIT_LOGS"}, audit.Scopes)
	require.True(t, audit.Sessions)
	require.True(t, audit.ReadOnly)
	require.NotEmpty(t, audit.Title)
	require.NotEmpty(t, audit.Description)
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(audit.InputSchema, &schema))
	require.Equal(t, "object", schema.Type)
	require.Contains(t, schema.Properties, "entity_type")
	require.Equal(t, []string{"API_KEYS"}, full["api_keys_list"].Scopes)
	require.Equal(t, []string{"READ_CRM"}, full["teams_list"].Scopes)
	require.Equal(t, []string{}, full["whoami"].Scopes, "any credential may ask who it is")

	narrow := restTools(t, env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadAuditLogs)))
	require.Equal(t, []string{"audit_logs_list", "whoami"}, toolNames(narrow))
	require.Equal(t, []string{"whoami"}, toolNames(restTools(t, env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.Webhooks)))))

	ada := orgSignUp(t, env, "ada@example.com")
	require.Equal(t, allTools, toolNames(restTools(t, ada.client)), "sessions may call every tool of an operation open to them")

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
	require.Equal(t, []string{"audit_logs_list", "whoami"}, me.Tools)

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
		{narrow, "audit_logs_list", `{"cursor": "not-a-uuid"}`, http.StatusBadRequest, "invalid_arguments"},
		{narrow, "audit_logs_list", `{"date": "yesterday"}`, http.StatusBadRequest, "invalid_arguments"},
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
