package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// MCP serves the Model Context Protocol endpoint /v1/mcp (streamable HTTP) over the agent tool registry, for
// agents holding an API key or an OAuth access token. Each request gets a server holding only the tools its
// credential may call, whose handlers run through the registry with that credential.
//
// The endpoint is stateless (no Mcp-Session-Id, no standalone GET stream: GET answers 405, which MCP clients
// take as "no stream offered"): every POST carries its bearer token and stands alone, so any API instance can
// answer any request and a session can never outlive, or be picked up without, the credential behind it.
type MCP struct {
	registry   *tools.Registry
	logger     *slog.Logger
	challenge  string
	streamable *mcp.StreamableHTTPHandler
}

// NewMCP builds the endpoint. publicURL is the deployment root: unauthenticated clients are pointed at its
// /.well-known/oauth-protected-resource document to find the authorization server.
func NewMCP(registry *tools.Registry, logger *slog.Logger, publicURL string) *MCP {
	m := &MCP{
		registry:  registry,
		logger:    logger,
		challenge: `Bearer resource_metadata="` + publicURL + `/.well-known/oauth-protected-resource"`,
	}
	m.streamable = mcp.NewStreamableHTTPHandler(requestServer, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       logger,
		// The SDK's DNS-rebinding guard refuses loopback connections whose Host is not loopback, which is every
		// request behind a local reverse proxy. It protects servers that trust the connection itself; this one
		// trusts only the bearer token, which a rebinding page cannot attach.
		DisableLocalhostProtection: true,
	})
	return m
}

// mcpServerKey carries the server built for one request from ServeHTTP to the SDK's getServer callback.
type mcpServerKey struct{}

// requestServer returns the server ServeHTTP built for the request (nil, answered 400 by the SDK, if none).
func requestServer(r *http.Request) *mcp.Server {
	s, _ := r.Context().Value(mcpServerKey{}).(*mcp.Server)
	return s
}

// ServeHTTP authenticates the request from the outcome the credential middleware recorded, then hands it to
// the SDK with a server holding the caller's tools. Without a valid token the answer is 401 with the
// WWW-Authenticate challenge MCP clients follow to sign in; sessions are refused with 403 (the endpoint is for
// agent credentials; people use the REST API).
func (m *MCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, err, _ := auth.OutcomeFrom(r.Context())
	if p == nil || err != nil {
		m.refuse(w, r, err)
		return
	}
	if p.IsSession() {
		apierror.Write(w, r, m.logger, apierror.Forbidden("session_not_allowed",
			"The MCP endpoint takes API keys and OAuth access tokens; signed-in sessions use the REST API."))
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), mcpServerKey{}, m.server(p, reqctx.From(r.Context()))))
	ew := &mcpErrorWriter{ResponseWriter: w}
	m.streamable.ServeHTTP(ew, r)
	if ew.status != 0 {
		apierror.Write(w, r, m.logger, transportError(ew.status, ew.body.String()))
	}
}

// mcpErrorWriter holds back the plain-text errors the SDK writes for requests it cannot take at the HTTP
// level (wrong method, Accept or Content-Type, a body that is not JSON-RPC), so they can be answered in the
// error envelope like every other error of the API. JSON-RPC answers, errors included, pass through.
type mcpErrorWriter struct {
	http.ResponseWriter
	status int
	body   strings.Builder
}

func (w *mcpErrorWriter) WriteHeader(code int) {
	if code >= http.StatusBadRequest && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status = code
		w.Header().Del("Content-Type")
		w.Header().Del("X-Content-Type-Options")
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *mcpErrorWriter) Write(p []byte) (int, error) {
	if w.status != 0 {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flushes of event streams).
func (w *mcpErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// transportError maps a transport-level refusal of the SDK onto the API's error type; its text is written for
// clients, except for server failures, which keep their details in the log.
func transportError(status int, text string) *apierror.Error {
	text = strings.TrimSpace(text)
	if status >= http.StatusInternalServerError {
		return apierror.Internal(errors.New("mcp transport: " + text))
	}
	code := map[int]string{
		http.StatusBadRequest:            "invalid_mcp_request",
		http.StatusForbidden:             "forbidden",
		http.StatusNotFound:              "mcp_session_not_found",
		http.StatusMethodNotAllowed:      "method_not_allowed",
		http.StatusNotAcceptable:         "not_acceptable",
		http.StatusRequestEntityTooLarge: "request_too_large",
		http.StatusUnsupportedMediaType:  "unsupported_media_type",
	}[status]
	if code == "" {
		code = "invalid_mcp_request"
	}
	return apierror.New(status, code, text)
}

// refuse answers a request without a usable credential. Authentication failures (none sent, or one that
// authenticates nothing) carry the challenge; other outcomes (rate limited, a failure looking it up) keep
// their own status.
func (m *MCP) refuse(w http.ResponseWriter, r *http.Request, err error) {
	e := apierror.Unauthorized("missing_credential", "Send an API key or OAuth access token as `Authorization: Bearer <token>`.")
	if err != nil {
		e = apierror.From(err)
	}
	if e.Status == http.StatusUnauthorized {
		challenge := m.challenge
		if err != nil {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
	}
	apierror.Write(w, r, m.logger, e)
}

// server builds the MCP server of one request: the tools p may call, each bound to p and the request's facts
// (id, client address) so audit entries and logs of a tool call read like those of the REST call.
func (m *MCP) server(p *auth.Principal, info reqctx.Info) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "outflow", Title: "Outflow", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "Outflow outbound email platform. Call whoami first to learn the organization and what this credential may do.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Logger:       m.logger,
	})
	closed := false
	for _, t := range m.registry.List(p) {
		s.AddTool(&mcp.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, IdempotentHint: t.ReadOnly, OpenWorldHint: &closed},
		}, m.call(p, info, t.Name))
	}
	return s
}

// call runs tool name through the registry as p. Arguments the tool cannot take are a JSON-RPC invalid-params
// error; a failure of the tool itself is a result with isError set and the error envelope as content, which
// the model can read and act on (MCP's split between protocol and tool errors).
func (m *MCP) call(p *auth.Principal, info reqctx.Info, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = auth.WithPrincipal(reqctx.With(ctx, info), p)
		res, err := m.registry.Call(ctx, name, req.Params.Arguments)
		if err != nil {
			e := apierror.From(err)
			apierror.Log(ctx, m.logger, e)
			if e.Status == http.StatusBadRequest && e.Code == "invalid_arguments" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Message}
			}
			return toolResult(apierror.EnvelopeFor(ctx, e), true)
		}
		if res.Accepted {
			return toolResult(map[string]any{"status": "accepted", "result": res.Value}, false)
		}
		return toolResult(res.Value, false)
	}
}

// toolResult carries v both as structured content and, for clients that read only text, as its JSON.
func toolResult(v any, isError bool) (*mcp.CallToolResult, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body),
		IsError:           isError,
	}, nil
}
