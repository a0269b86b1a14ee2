package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/httpmw"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// authorizationKey carries the caller's Authorization header from the request that called a tool to the
// request the tool makes.
type authorizationKey struct{}

// WithAuthorization returns ctx carrying the Authorization header the caller sent. The API's security check
// and the MCP endpoint record it, so a tool call re-enters the API as that same caller.
func WithAuthorization(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, authorizationKey{}, header)
}

// Dispatch returns the Run of def's tool: the arguments become the operation's HTTP request (path parameters
// substituted and escaped, query parameters, the Idempotency-Key header, the JSON body) under prefix (where
// the API is mounted, /v1), which api (the server's whole request path) serves as it serves a client's, with the caller's own Authorization header and
// request facts. Validation, scope and permission checks, mailbox limits, idempotency and the agent-policy
// gate therefore apply to a tool call exactly as to the REST call. A 2xx answer is the result (202: Accepted);
// any other is an *apierror.Error with the answer's status, code and message.
func (def Definition) Dispatch(api http.Handler, prefix string) func(ctx context.Context, args json.RawMessage) (any, error) {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		r, err := def.request(ctx, prefix, args)
		if err != nil {
			return nil, err
		}
		var w response
		api.ServeHTTP(&w, r)
		return w.result()
	}
}

// request builds the operation's request from args (already checked against the input schema).
func (def Definition) request(ctx context.Context, prefix string, raw json.RawMessage) (*http.Request, error) {
	authorization, _ := ctx.Value(authorizationKey{}).(string)
	if authorization == "" {
		return nil, apierror.Internal(errors.New("tools: the context carries no Authorization header to call " + def.Name + " with"))
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, invalidArguments("arguments must be a JSON object.")
	}
	path, query, header := prefix+def.Path, url.Values{}, http.Header{}
	for _, p := range def.Params {
		v, ok := args[p.Argument]
		if !ok {
			continue
		}
		delete(args, p.Argument)
		values := textValues(v)
		switch {
		case p.In == "path" && len(values) == 1:
			path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(values[0]), 1)
		case p.In == "query":
			query[p.Name] = values
		case p.In == "header" && len(values) == 1:
			header.Set(p.Name, values[0])
		default:
			return nil, invalidArguments(fmt.Sprintf("%s must be a single value.", p.Argument))
		}
	}
	var body []byte
	switch def.Body {
	case BodyFields:
		if len(args) > 0 || def.BodyRequired {
			body, _ = json.Marshal(args)
		}
	case BodyValue:
		body = args["body"]
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	r, err := http.NewRequestWithContext(ctx, def.Method, target, bytes.NewReader(body))
	if err != nil {
		return nil, invalidArguments(fmt.Sprintf("arguments of %s do not make a request: %v", def.Name, err))
	}
	for k, v := range header {
		r.Header[k] = v
	}
	info := reqctx.From(ctx)
	r.Header.Set("Authorization", authorization)
	r.Header.Set("Accept", "application/json")
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	// The request facts of the call: its id (so the audit entries and logs of both name one request), the
	// client's address (API keys' IP allow-lists) and agent, and a session's chosen organization.
	r.Header.Set(httpmw.RequestIDHeader, info.ID)
	r.Header.Set("User-Agent", info.UserAgent)
	if info.Organization != "" {
		r.Header.Set(httpmw.OrganizationHeader, info.Organization)
	}
	if info.ClientIP != "" {
		r.RemoteAddr = net.JoinHostPort(info.ClientIP, "0")
	}
	return r, nil
}

// textValues is an argument as parameter text: a string as it is, a number or boolean as JSON writes it,
// each item of an array so (a query parameter repeated per item).
func textValues(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		out := make([]string, 0, len(list))
		for _, item := range list {
			out = append(out, textValues(item)...)
		}
		return out
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	return []string{string(bytes.TrimSpace(raw))}
}

// response records what the API answered a tool's request.
type response struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *response) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}

func (w *response) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *response) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// result is the tool's outcome of the answer: its JSON body (nil when empty), Accepted for a 202, the error
// envelope's status, code, message and fix as an *apierror.Error otherwise.
func (w *response) result() (any, error) {
	body := bytes.TrimSpace(w.body.Bytes())
	if w.status >= 200 && w.status < 300 {
		var v any
		if len(body) > 0 {
			v = json.RawMessage(body)
		}
		if w.status == http.StatusAccepted {
			return Accepted{Value: v}, nil
		}
		return v, nil
	}
	var env apierror.Envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Code == "" {
		return nil, apierror.Internal(fmt.Errorf("tools: the API answered %d without an error envelope: %.200s", w.status, body))
	}
	e := apierror.New(w.status, env.Code, env.Message)
	e.Fix = env.Fix
	e.RetryAfter, _ = strconv.Atoi(w.Header().Get("Retry-After"))
	return nil, e
}
