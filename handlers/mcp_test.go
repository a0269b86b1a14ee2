package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
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
	names := mcpToolNames(t, full)
	require.Subset(t, names, agentTools)
	for _, name := range notAgentTools {
		require.NotContains(t, names, name)
	}

	tools, err := full.ListTools(ctx, nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		require.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.Annotations, tool.Name)
		schema, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		require.Contains(t, string(schema), `"type":"object"`, tool.Name)
		if tool.Name == "mailboxes_list" {
			require.True(t, tool.Annotations.ReadOnlyHint)
		}
		if tool.Name == "mailboxes_send" {
			require.False(t, tool.Annotations.ReadOnlyHint)
		}
	}

	narrow, err := mcpConnect(t, env, scopedKey(t, env, boot.OrganizationID, auth.ReadAuditLogs))
	require.NoError(t, err)
	require.Equal(t, []string{"agent_policies_get_effective", "audit_logs_list", "whoami"}, mcpToolNames(t, narrow), "a narrower key sees fewer tools")
	reader, err := mcpConnect(t, env, scopedKey(t, env, boot.OrganizationID, auth.ReadOnly))
	require.NoError(t, err)
	readable := mcpToolNames(t, reader)
	require.Contains(t, readable, "segments_list")
	require.NotContains(t, readable, "segments_create", "a read-only key sees no write tool")
	require.NotContains(t, readable, "mailboxes_send")

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

	// A write tool runs the operation; what it made is there for the REST API to read.
	res, err = full.CallTool(ctx, &mcp.CallToolParams{Name: "segments_create", Arguments: map[string]any{"name": "Warm leads"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var segment api.Segment
	mcpResult(t, res, &segment)
	got, err := env.Client(t, boot.APIKey).SegmentsGet(ctx, api.SegmentsGetParams{ID: segment.ID})
	require.NoError(t, err)
	require.Equal(t, "Warm leads", got.Name)
	res, err = reader.CallTool(ctx, &mcp.CallToolParams{Name: "segments_list", Arguments: map[string]any{"q": "warm"}})
	require.NoError(t, err)
	var segments api.SegmentList
	mcpResult(t, res, &segments)
	require.Len(t, segments.Data, 1)

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

func TestMCPListsTheToolsRESTLists(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	for _, key := range []string{boot.APIKey, scopedKey(t, env, boot.OrganizationID, auth.ReadOnly|auth.SendDirectEmail)} {
		rest := restTools(t, env.Client(t, key))
		session, err := mcpConnect(t, env, key)
		require.NoError(t, err)
		listed, err := session.ListTools(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, toolNames(rest), mcpToolNames(t, session))
		for _, tool := range listed.Tools {
			want := rest[tool.Name]
			require.Equal(t, want.Title, tool.Title, tool.Name)
			require.Equal(t, want.Description, tool.Description, tool.Name)
			schema, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			require.JSONEq(t, string(want.InputSchema), string(schema), tool.Name)
			require.Equal(t, want.ReadOnly, tool.Annotations.ReadOnlyHint, tool.Name)
			require.NotNil(t, tool.Annotations.DestructiveHint, tool.Name)
			require.Equal(t, want.Destructive, *tool.Annotations.DestructiveHint, tool.Name)
			require.Equal(t, want.Idempotent, tool.Annotations.IdempotentHint, tool.Name)
			require.NotNil(t, tool.Annotations.OpenWorldHint, tool.Name)
			require.Equal(t, want.OpenWorld, *tool.Annotations.OpenWorldHint, tool.Name)
		}
	}
}

func TestMCPRefusesCallersWithoutAnAgentCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	post := func(token string) *http.Response {
		return mcpPost(t, env, token, mcpInitialize, nil)
	}
	challenge := `Bearer resource_metadata="` + env.Config.PublicURL + `/.well-known/oauth-protected-resource/v1/mcp", scope="`

	resp := post("")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	www := resp.Header.Get("WWW-Authenticate")
	require.True(t, strings.HasPrefix(www, challenge), www)
	scopes := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(www, challenge), `"`))
	require.Contains(t, scopes, "read_emails")
	require.Contains(t, scopes, "send_direct_email")
	require.NotContains(t, scopes, "send_campaigns", "a self-registered client can never hold it")
	require.NotContains(t, scopes, "api_keys")
	require.Len(t, scopes, 23)
	var body api.Error
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "missing_credential", body.Code)
	require.NotEmpty(t, body.RequestID)

	resp = post("of_live_not-a-real-key")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, www+`, error="invalid_token"`, resp.Header.Get("WWW-Authenticate"))

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
	resp = env.Do(t, http.MethodPost, "/v1/mcp", boot.APIKey, strings.NewReader(mcpInitialize), http.Header{"Content-Type": {"text/plain"}})
	require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	requireEnvelope(t, resp, "unsupported_media_type")
}

// mcpInitialize is an initialize request as MCP clients send it first.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// mcpPost posts body to /v1/mcp as JSON with token, accepting both answers an MCP client takes unless header
// says otherwise.
func mcpPost(t *testing.T, env *apitest.Env, token, body string, header http.Header) *http.Response {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	for k, v := range header {
		h[k] = v
	}
	return env.Do(t, http.MethodPost, "/v1/mcp", token, strings.NewReader(body), h)
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    struct {
			RequestID string `json:"request_id"`
		} `json:"data"`
	} `json:"error"`
}

func TestMCPAnswersJSONRPCFailuresInJSONRPC(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	for body, code := range map[string]int64{
		`{"jsonrpc":"2.0","id":1,"method":`: -32700,
		``:                                  -32700,
		`{}`:                                -32600,
		`{"jsonrpc":"2.0","id":1}`:          -32600,
		`[]`:                                -32600,
	} {
		resp := mcpPost(t, env, boot.APIKey, body, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"), body)
		var got rpcError
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got), body)
		require.Equal(t, "2.0", got.JSONRPC)
		require.JSONEq(t, `null`, string(got.ID), body)
		require.Equal(t, code, got.Error.Code, body)
		require.NotEmpty(t, got.Error.Message)
		require.Equal(t, resp.Header.Get("X-Request-Id"), got.Error.Data.RequestID)
	}
	// A method the server does not have is a JSON-RPC error too.
	resp := mcpPost(t, env, boot.APIKey, `{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate"}`, nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var got rpcError
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, int64(-32601), got.Error.Code)
	require.JSONEq(t, `7`, string(got.ID), "the request's own id")
}

func TestMCPNegotiatesTheAnswersMediaType(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	accept := func(values ...string) *http.Response {
		h := http.Header{"Accept": values}
		if values == nil {
			h = http.Header{"Accept": nil}
		}
		return mcpPost(t, env, boot.APIKey, mcpInitialize, h)
	}
	for _, tc := range []struct {
		accept []string
		status int
		media  string
	}{
		{[]string{"application/json, text/event-stream"}, http.StatusOK, "application/json"},
		{[]string{"application/json"}, http.StatusOK, "application/json"},
		{[]string{"*/*"}, http.StatusOK, "application/json"},
		{nil, http.StatusOK, "application/json"},
		{[]string{"text/event-stream"}, http.StatusOK, "text/event-stream"},
		{[]string{"text/html"}, http.StatusNotAcceptable, "application/json"},
		{[]string{"application/json;q=0, text/html"}, http.StatusNotAcceptable, "application/json"},
	} {
		resp := accept(tc.accept...)
		require.Equal(t, tc.status, resp.StatusCode, tc.accept)
		require.Equal(t, tc.media, strings.Split(resp.Header.Get("Content-Type"), ";")[0], tc.accept)
		if tc.status == http.StatusNotAcceptable {
			requireEnvelope(t, resp, "not_acceptable")
			continue
		}
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Contains(t, string(raw), `"serverInfo":{"name":"outflow"`, tc.accept)
	}
}

func TestMCPRefusesBrowserPagesOfOtherOrigins(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	for _, tc := range []struct {
		header http.Header
		status int
	}{
		{http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{http.Header{"Origin": {env.Config.AppURL}, "Sec-Fetch-Site": {"cross-site"}}, http.StatusOK},
		{http.Header{"Origin": {env.Config.PublicURL}}, http.StatusOK},
		{http.Header{"Origin": {env.Server.URL}}, http.StatusOK},
		{http.Header{"Sec-Fetch-Site": {"same-origin"}}, http.StatusOK},
		{http.Header{}, http.StatusOK},
	} {
		resp := mcpPost(t, env, boot.APIKey, mcpInitialize, tc.header)
		require.Equal(t, tc.status, resp.StatusCode, tc.header)
		if tc.status == http.StatusForbidden {
			requireEnvelope(t, resp, "origin_not_allowed")
		}
	}
	// The Origin is checked before the credential: a foreign page learns nothing, not even the challenge.
	resp := mcpPost(t, env, "", mcpInitialize, http.Header{"Origin": {"https://evil.example"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Empty(t, resp.Header.Get("WWW-Authenticate"))
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

func TestMCPToolCallsActAsTheirOwnCallerWhateverOthersShareItsScopes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	acme, globex := env.Bootstrap(t, "acme"), env.Bootstrap(t, "globex")
	keys := map[string]uuid.UUID{
		scopedKey(t, env, acme.OrganizationID, auth.ReadAuditLogs):   acme.OrganizationID,
		scopedKey(t, env, acme.OrganizationID, auth.ReadAuditLogs):   acme.OrganizationID,
		scopedKey(t, env, globex.OrganizationID, auth.ReadAuditLogs): globex.OrganizationID,
	}
	seen := map[uuid.UUID]bool{}
	for round := 0; round < 2; round++ {
		for key, org := range keys {
			s, err := mcpConnect(t, env, key)
			require.NoError(t, err)
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
			require.NoError(t, err)
			var me whoamiResult
			mcpResult(t, res, &me)
			require.Equal(t, org, me.Organization.ID)
			seen[me.Credential.ID] = true
		}
	}
	require.Len(t, seen, 3, "each key is itself, though all three hold the same scopes")
}
