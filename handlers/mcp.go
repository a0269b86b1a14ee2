package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/oauth"
)

// MCP serves the Model Context Protocol endpoint /v1/mcp (streamable HTTP) over the agent tool registry, for
// agents holding an API key or an OAuth access token. Each request gets a server holding only the tools its
// credential may call, whose handlers run through the registry with that credential.
//
// The endpoint is stateless (no Mcp-Session-Id, no standalone GET stream: GET answers 405, which MCP clients
// take as "no stream offered"): every POST carries its bearer token and stands alone, so any API instance can
// answer any request and a session can never outlive, or be picked up without, the credential behind it.
type MCP struct {
	registry  *tools.Registry
	logger    *slog.Logger
	challenge string
	// origins refuses browser requests from pages of other origins than the deployment's own (the API's and
	// the web app's); requests without an Origin (agents, CLIs) pass.
	origins *http.CrossOriginProtection
	mu      sync.Mutex
	servers map[auth.Permission]*mcp.Server
	// jsonAnswers answers each request with one JSON object, streamAnswers with an event stream, for clients
	// that accept only that.
	jsonAnswers, streamAnswers *mcp.StreamableHTTPHandler
}

// NewMCP builds the endpoint. publicURL is the deployment root: unauthenticated clients are pointed at the
// endpoint's RFC 9728 document under it to find the authorization server and the scopes to ask for; browser
// pages may call it from publicURL and appURL (the web app) only.
func NewMCP(registry *tools.Registry, logger *slog.Logger, publicURL, appURL string) *MCP {
	m := &MCP{
		registry:  registry,
		logger:    logger,
		challenge: mcpChallenge(publicURL),
		origins:   http.NewCrossOriginProtection(),
		servers:   map[auth.Permission]*mcp.Server{},
	}
	for _, raw := range []string{publicURL, appURL} {
		if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
			// A malformed origin is not trusted, which only refuses more: same-origin requests still pass.
			_ = m.origins.AddTrustedOrigin(u.Scheme + "://" + u.Host)
		}
	}
	handler := func(oneObject bool) *mcp.StreamableHTTPHandler {
		return mcp.NewStreamableHTTPHandler(requestServer, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: oneObject,
			Logger:       logger,
			// The SDK's DNS-rebinding guard refuses loopback connections whose Host is not loopback, which is
			// every request behind a local reverse proxy. It protects servers that trust the connection itself;
			// this one trusts only the bearer token, which a rebinding page cannot attach, and checks Origin.
			DisableLocalhostProtection: true,
		})
	}
	m.jsonAnswers, m.streamAnswers = handler(true), handler(false)
	return m
}

// mcpChallenge is the WWW-Authenticate challenge of a request without a usable credential: where the
// endpoint's protected resource metadata is (the RFC 9728 path-suffixed address, as MCP clients derive it)
// and the scopes a client registering itself can be granted (asking for more fails its registration).
func mcpChallenge(publicURL string) string {
	return `Bearer resource_metadata="` + publicURL + `/.well-known/oauth-protected-resource/v1/mcp", scope="` +
		oauth.ScopeString(selfRegistrableScopes) + `"`
}

// mcpServerKey carries the server built for one request from ServeHTTP to the SDK's getServer callback.
type mcpServerKey struct{}

// requestServer returns the server ServeHTTP built for the request (nil, answered 400 by the SDK, if none).
func requestServer(r *http.Request) *mcp.Server {
	s, _ := r.Context().Value(mcpServerKey{}).(*mcp.Server)
	return s
}

// ServeHTTP checks the request's Origin, authenticates it from the outcome the credential middleware
// recorded, then hands it to the SDK with a server holding the caller's tools. Without a valid token the
// answer is 401 with the WWW-Authenticate challenge MCP clients follow to sign in; sessions are refused with
// 403 (the endpoint is for agent credentials; people use the REST API). A body that is not JSON, or not a
// JSON-RPC message, is answered with a JSON-RPC error; an Accept header allowing neither JSON nor an event
// stream with 406.
func (m *MCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := m.origins.Check(r); err != nil {
		apierror.Write(w, r, m.logger, apierror.Forbidden("origin_not_allowed",
			"Browser pages may call the MCP endpoint only from this deployment's own origins; this request came from "+
				strconv.Quote(r.Header.Get("Origin"))+"."))
		return
	}
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
	streamable := m.negotiate(r)
	if streamable == nil {
		apierror.Write(w, r, m.logger, apierror.New(http.StatusNotAcceptable, "not_acceptable",
			"The MCP endpoint answers with application/json or text/event-stream; the Accept header allows neither."))
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = m.readable(w, r); !ok {
			return
		}
	}
	// The SDK runs tool calls in the request's context, where the caller is: the principal, the request's
	// facts and now its credential, with which each call re-enters the API.
	ctx := tools.WithAuthorization(r.Context(), r.Header.Get("Authorization"))
	r = r.WithContext(context.WithValue(ctx, mcpServerKey{}, m.serverFor(p)))
	// The SDK insists on both media types in Accept; negotiate chose the handler that answers in one the
	// client takes.
	r.Header = r.Header.Clone()
	r.Header.Set("Accept", "application/json, text/event-stream")
	ew := &mcpErrorWriter{ResponseWriter: w}
	streamable.ServeHTTP(ew, r)
	switch {
	case ew.status == http.StatusBadRequest && r.Method == http.MethodPost:
		// The SDK's refusals of a message: a method it does not have, a batch where none are allowed, a
		// request without its params.
		text, code := strings.TrimSpace(ew.body.String()), int64(jsonrpc.CodeInvalidRequest)
		if strings.HasPrefix(text, "JSON RPC not handled") {
			code = jsonrpc.CodeMethodNotFound
		}
		m.rpcError(w, r, requestID(body), code, text+".")
	case ew.status != 0:
		apierror.Write(w, r, m.logger, transportError(ew.status, ew.body.String()))
	}
}

// negotiate picks the SDK handler whose answers the request's Accept allows: JSON when it may, else an event
// stream; nil when neither is acceptable. No Accept header accepts anything (RFC 9110 section 12.5.1).
func (m *MCP) negotiate(r *http.Request) *mcp.StreamableHTTPHandler {
	values := r.Header.Values("Accept")
	if len(values) == 0 {
		return m.jsonAnswers
	}
	var object, stream bool
	for _, value := range values {
		for _, item := range strings.Split(value, ",") {
			media, params, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q == 0 {
				continue // q=0: explicitly not acceptable
			}
			switch media {
			case "application/json", "application/*":
				object = true
			case "text/event-stream", "text/*":
				stream = true
			case "*/*":
				object, stream = true, true
			}
		}
	}
	switch {
	case object:
		return m.jsonAnswers
	case stream:
		return m.streamAnswers
	}
	return nil
}

// readable checks that a POST body is a JSON-RPC message before the SDK reads it, answering -32700 (parse
// error) for one that is not JSON and -32600 (invalid request) for JSON that is no message, and leaves the
// body in place for the SDK. It returns the body and whether the request goes on.
func (m *MCP) readable(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			apierror.Write(w, r, m.logger, DecodeError(err))
			return nil, false
		}
	}
	if !json.Valid(body) {
		m.rpcError(w, r, nil, jsonrpc.CodeParseError, "Parse error: the request body is not JSON.")
		return nil, false
	}
	if problem := rpcShape(body); problem != "" {
		m.rpcError(w, r, nil, jsonrpc.CodeInvalidRequest, "Invalid request: "+problem)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// requestID is the id of a single JSON-RPC request body (nil for a batch or a notification).
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return m.ID
}

// rpcShape says what keeps a JSON body from being a JSON-RPC 2.0 message or a batch of them ("" when
// nothing does): each must be an object with jsonrpc "2.0" and either a method (a request or notification)
// or an id with exactly one of result and error (a response).
func rpcShape(body []byte) string {
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) == nil {
		if len(batch) == 0 {
			return "an empty batch."
		}
	} else {
		batch = []json.RawMessage{body}
	}
	for _, raw := range batch {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return "a message must be a JSON object."
		}
		var version, method string
		if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
			return `a message must carry "jsonrpc": "2.0".`
		}
		_, result := m["result"]
		_, failure := m["error"]
		_, id := m["id"]
		switch {
		case m["method"] != nil:
			if json.Unmarshal(m["method"], &method) != nil || method == "" {
				return "method must be a non-empty string."
			}
		case !id || result == failure:
			return "a message is a request (with a method) or a response (an id and one of result and error)."
		}
	}
	return ""
}

// rpcError answers a JSON-RPC failure of the request as a JSON-RPC error response to id (null when it could
// not be read) with status 400, carrying the request id for support as the envelope does.
func (m *MCP) rpcError(w http.ResponseWriter, r *http.Request, id json.RawMessage, code int64, message string) {
	apierror.Log(r.Context(), m.logger, apierror.BadRequest("invalid_mcp_request", message))
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: map[string]any{"code": code, "message": message,
		"data": map[string]string{"request_id": reqctx.ID(r.Context())}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(append(body, '\n'))
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

// maxServers bounds the servers kept, one per distinct scope set (credentials share a handful in practice).
const maxServers = 64

// serverFor returns the server holding the tools p (an API key or OAuth token) may call, which depend on its
// scopes alone. A server holds no caller (its tools read theirs from the request's context), so one serves
// every credential with the same scopes: it is built on first use (registering a tool set costs the SDK far
// more than a call) and kept; past maxServers scope sets the cache starts over.
func (m *MCP) serverFor(p *auth.Principal) *mcp.Server {
	m.mu.Lock()
	s, ok := m.servers[p.Permissions]
	m.mu.Unlock()
	if ok {
		return s
	}
	s = m.server(p)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.servers) >= maxServers {
		m.servers = map[auth.Permission]*mcp.Server{}
	}
	m.servers[p.Permissions] = s
	return s
}

// server builds an MCP server holding the tools p may call.
func (m *MCP) server(p *auth.Principal) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "outflow", Title: "Outflow", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "Outflow outbound email platform. Call whoami first to learn the organization and what this credential may do.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Logger:       m.logger,
	})
	for _, t := range m.registry.List(p) {
		// The contract's hints, destructiveHint and openWorldHint always stated: MCP takes a tool without them
		// as destructive and open world.
		destructive, openWorld := t.Hints.Destructive, t.Hints.OpenWorld
		s.AddTool(&mcp.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.SchemaJSON(),
			Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.Hints.ReadOnly, DestructiveHint: &destructive,
				IdempotentHint: t.Hints.Idempotent, OpenWorldHint: &openWorld},
		}, m.call(t.Name))
	}
	return s
}

// call runs tool name through the registry as the caller in ctx (the request's: its principal, facts and
// credential), so audit entries and logs of a tool call read like those of the REST call. Arguments the
// tool cannot take are a JSON-RPC invalid-params error; a failure of the tool itself is a result with isError
// set and the error envelope as content, which the model can read and act on (MCP's split between protocol
// and tool errors).
func (m *MCP) call(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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

// toolResult carries v as JSON text and, when it is a JSON object (what MCP's structured content must be),
// as structured content too.
func toolResult(v any, isError bool) (*mcp.CallToolResult, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, IsError: isError}
	if bytes.HasPrefix(body, []byte("{")) {
		res.StructuredContent = json.RawMessage(body)
	}
	return res, nil
}
