package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// bearerTransport adds a bearer credential to every request, as an MCP client configured with an API key does.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpConnect connects the official Go SDK client to /v1/mcp with token.
func mcpConnect(t *testing.T, env *apitest.Env, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "outflow-test", Version: "1.0.0"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   env.Server.URL + "/v1/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token: token, next: env.Server.Client().Transport}},
		MaxRetries: -1,
	}, nil)
	if err == nil {
		t.Cleanup(func() { _ = session.Close() })
	}
	return session, err
}

func mcpToolNames(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	require.NoError(t, err)
	out := []string{}
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// mcpResult decodes a tool result's structured content into out, checking the text content carries the same.
func mcpResult(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	require.JSONEq(t, text.Text, string(raw))
	require.NoError(t, json.Unmarshal(raw, out))
}

func TestMCPClientListsAndCallsTools(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	_, err := env.Client(t, boot.APIKey).OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Sales"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)

	full, err := mcpConnect(t, env, boot.APIKey)
	require.NoError(t, err)
	init := full.InitializeResult()
	require.Equal(t, "outflow", init.ServerInfo.Name)
	require.NotNil(t, init.Capabilities.Tools)
	require.Equal(t, allTools, mcpToolNames(t, full))

	tools, err := full.ListTools(ctx, nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		require.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.Annotations, tool.Name)
		require.True(t, tool.Annotations.ReadOnlyHint, tool.Name)
		schema, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		require.Contains(t, string(schema), `"type":"object"`, tool.Name)
	}

	narrow, err := mcpConnect(t, env, scopedKey(t, env, boot.OrganizationID, auth.ReadAuditLogs))
	require.NoError(t, err)
	require.Equal(t, []string{"audit_logs_list", "whoami"}, mcpToolNames(t, narrow), "a narrower key sees fewer tools")

	res, err := narrow.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var me whoamiResult
	mcpResult(t, res, &me)
	require.Equal(t, boot.OrganizationID, me.Organization.ID)
	require.Equal(t, "acme", me.Organization.Name)
	require.Equal(t, []string{"READ_AUDIT_LOGS"}, me.Scopes)

	res, err = narrow.CallTool(ctx, &mcp.CallToolParams{Name: "audit_logs_list", Arguments: map[string]any{"limit": 10}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var entries api.AuditLogList
	mcpResult(t, res, &entries)
	actions := auditActions(&entries)
	require.Equal(t, []string{"team.created", "api_key.created", "organization.created"}, actions)

	res, err = full.CallTool(ctx, &mcp.CallToolParams{Name: "teams_list"})
	require.NoError(t, err)
	var teams api.TeamCollection
	mcpResult(t, res, &teams)
	require.Len(t, teams.Data, 1)

	// A failing tool is a result the model can read; arguments it cannot take and tools the key may not use
	// are protocol errors.
	res, err = full.CallTool(ctx, &mcp.CallToolParams{Name: "teams_get", Arguments: map[string]any{"id": "00000000-0000-4000-8000-000000000000"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	var envelope api.Error
	mcpResult(t, res, &envelope)
	require.Equal(t, "not_found", envelope.Code)
	require.NotEmpty(t, envelope.RequestID)

	_, err = narrow.CallTool(ctx, &mcp.CallToolParams{Name: "audit_logs_list", Arguments: map[string]any{"limit": 500}})
	require.ErrorContains(t, err, "input schema")
	_, err = narrow.CallTool(ctx, &mcp.CallToolParams{Name: "teams_list"})
	require.ErrorContains(t, err, "unknown tool")
}

func TestMCPRefusesCallersWithoutAnAgentCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	post := func(token string) *http.Response {
		return env.Do(t, http.MethodPost, "/v1/mcp", token, strings.NewReader(initialize), http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	}
	challenge := `Bearer resource_metadata="` + env.Config.PublicURL + `/.well-known/oauth-protected-resource"`

	resp := post("")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, challenge, resp.Header.Get("WWW-Authenticate"))
	var body api.Error
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "missing_credential", body.Code)
	require.NotEmpty(t, body.RequestID)

	resp = post("of_live_not-a-real-key")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, challenge+`, error="invalid_token"`, resp.Header.Get("WWW-Authenticate"))

	_, err := mcpConnect(t, env, "")
	require.Error(t, err, "the SDK client cannot initialize without a credential")

	// Signed-in people use the REST API.
	resp = post(env.SignUp(t, "ada@example.com").AccessToken)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Empty(t, resp.Header.Get("WWW-Authenticate"))

	// An authenticated initialize succeeds without a session id; there is no standalone stream.
	resp = post(boot.APIKey)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	resp = env.Do(t, http.MethodGet, "/v1/mcp", boot.APIKey, nil, http.Header{"Accept": {"text/event-stream"}})
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	require.Equal(t, "POST", resp.Header.Get("Allow"))
	requireEnvelope(t, resp, "method_not_allowed")

	// Transport-level refusals of the SDK are answered in the error envelope too.
	resp = env.Do(t, http.MethodPost, "/v1/mcp", boot.APIKey, strings.NewReader(initialize), http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	requireEnvelope(t, resp, "invalid_mcp_request")
	resp = env.Do(t, http.MethodPost, "/v1/mcp", boot.APIKey, strings.NewReader(`{}`), http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	requireEnvelope(t, resp, "invalid_mcp_request")
}

// requireEnvelope checks resp carries the API's error envelope with code.
func requireEnvelope(t *testing.T, resp *http.Response, code string) {
	t.Helper()
	require.Equal(t, "application/json", strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	var body api.Error
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, code, body.Code)
	require.NotEmpty(t, body.Message)
	require.NotEmpty(t, body.RequestID)
}
