package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// seen is what the API behind a dispatched tool received.
type seen struct {
	method, path, rawPath, query, body, remote string
	header                                     http.Header
}

// api answers every request with status and body (and header), recording the request.
func api(status int, body string, header http.Header) (http.Handler, *seen) {
	s := &seen{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		*s = seen{method: r.Method, path: r.URL.Path, rawPath: r.URL.EscapedPath(), query: r.URL.RawQuery, body: string(raw),
			remote: r.RemoteAddr, header: r.Header}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}), s
}

// caller is the context of a tool call made by a request with these facts and credential.
func caller() context.Context {
	ctx := reqctx.With(context.Background(), reqctx.Info{ID: "req_1", ClientIP: "2001:db8::7", UserAgent: "agent/1", Organization: "org-9"})
	return tools.WithAuthorization(ctx, "Bearer of_live_key")
}

func TestDispatchMakesTheOperationsRequestAsTheCaller(t *testing.T) {
	t.Parallel()
	send := derived(t)["mailboxes_send"]
	h, got := api(http.StatusOK, `{"result":"executed"}`, nil)
	v, err := send.Dispatch(h, "/v1")(caller(), json.RawMessage(
		`{"id":"a/b c","to":["x@example.com"],"subject":"Hi","idempotency_key":"k-1","mode":"instant"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"result":"executed"}`, string(v.(json.RawMessage)))

	require.Equal(t, "POST", got.method)
	require.Equal(t, "/v1/emails/a/b c/send", got.path)
	require.Equal(t, "/v1/emails/a%2Fb%20c/send", got.rawPath, "path parameters are escaped")
	require.Empty(t, got.query)
	require.JSONEq(t, `{"to":["x@example.com"],"subject":"Hi","mode":"instant"}`, got.body)
	require.Equal(t, "k-1", got.header.Get("Idempotency-Key"))
	require.Equal(t, "Bearer of_live_key", got.header.Get("Authorization"), "the caller's own credential")
	require.Equal(t, "application/json", got.header.Get("Content-Type"))
	require.Equal(t, "req_1", got.header.Get("X-Request-Id"))
	require.Equal(t, "agent/1", got.header.Get("User-Agent"))
	require.Equal(t, "org-9", got.header.Get("X-Organization-Id"))
	require.Equal(t, "[2001:db8::7]:0", got.remote)
}

func TestDispatchPutsQueryArgumentsInTheQuery(t *testing.T) {
	t.Parallel()
	list := derived(t)["segments_list"]
	h, got := api(http.StatusOK, `{"data":[]}`, nil)
	_, err := list.Dispatch(h, "/v1")(caller(), json.RawMessage(`{"ids":["a","b&c"],"limit":20}`))
	require.NoError(t, err)
	require.Equal(t, "GET", got.method)
	require.Equal(t, "/v1/segments", got.path)
	require.Equal(t, "ids=a&ids=b%26c&limit=20", got.query, "an array is the parameter repeated")
	require.Empty(t, got.body)
	require.Empty(t, got.header.Get("Content-Type"))
}

func TestDispatchSendsABodyValueAsItIs(t *testing.T) {
	t.Parallel()
	create := derived(t)["contacts_create"]
	h, got := api(http.StatusCreated, `[{"id":"c1"}]`, nil)
	v, err := create.Dispatch(h, "/v1")(caller(), json.RawMessage(`{"body":[{"email":"a@example.com"}]}`))
	require.NoError(t, err)
	require.JSONEq(t, `[{"id":"c1"}]`, string(v.(json.RawMessage)))
	require.JSONEq(t, `[{"email":"a@example.com"}]`, got.body)

	_, err = create.Dispatch(h, "/v1")(caller(), json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Empty(t, got.body, "an optional body left out is not sent")

	segment := derived(t)["segments_create"]
	_, err = segment.Dispatch(h, "/v1")(caller(), json.RawMessage(`{"name":"VIP"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"VIP"}`, got.body)
}

func TestDispatchMapsTheAnswer(t *testing.T) {
	t.Parallel()
	list := derived(t)["segments_list"]
	call := func(status int, body string, header http.Header) (any, error) {
		h, _ := api(status, body, header)
		return list.Dispatch(h, "/v1")(caller(), json.RawMessage(`{}`))
	}

	v, err := call(http.StatusAccepted, `{"result":"awaiting_approval","approval_id":"a1"}`, nil)
	require.NoError(t, err)
	accepted, ok := v.(tools.Accepted)
	require.True(t, ok, "202 is accepted without a final result")
	require.JSONEq(t, `{"result":"awaiting_approval","approval_id":"a1"}`, string(accepted.Value.(json.RawMessage)))

	v, err = call(http.StatusNoContent, ``, nil)
	require.NoError(t, err)
	require.Nil(t, v)

	_, err = call(http.StatusTooManyRequests, `{"error":"too_many_requests","message":"Slow down.","code":"rate_limited","request_id":"req_1","fix":"Wait."}`,
		http.Header{"Retry-After": {"7"}})
	requireAPIError(t, err, http.StatusTooManyRequests, "rate_limited")
	e := errorOf(t, err)
	require.Equal(t, "Slow down.", e.Message)
	require.Equal(t, "Wait.", e.Fix)
	require.Equal(t, 7, e.RetryAfter)

	_, err = call(http.StatusBadGateway, `<html>proxy</html>`, nil)
	requireAPIError(t, err, http.StatusInternalServerError, "internal_error")

	_, err = list.Dispatch(http.NotFoundHandler(), "/v1")(context.Background(), json.RawMessage(`{}`))
	requireAPIError(t, err, http.StatusInternalServerError, "internal_error")
}
