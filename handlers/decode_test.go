package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/ogen-go/ogen/ogenerrors"
	"github.com/ogen-go/ogen/openapi"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// answer writes err the way the server's error handler does and returns the status and envelope.
func answer(t *testing.T, err error) (int, apierror.Envelope) {
	t.Helper()
	rec := httptest.NewRecorder()
	apierror.Write(rec, httptest.NewRequest("POST", "/v1/x", nil), slog.New(slog.NewJSONHandler(io.Discard, nil)), DecodeError(err))
	var env apierror.Envelope
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	return rec.Code, env
}

func TestDecodeErrorsMapToClientErrors(t *testing.T) {
	t.Parallel()
	inner := errors.New(`invalid: limit (int: 0 less than minimum 1)`)
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{&ogenerrors.DecodeParamsError{Err: inner}, 400, "invalid_parameter"},
		{&ogenerrors.DecodeParamsError{Err: &ogenerrors.DecodeParamError{Name: "id", In: openapi.LocationPath, Err: inner}}, 404, "not_found"},
		{&ogenerrors.DecodeParamsError{Err: &ogenerrors.DecodeParamError{Name: "limit", In: openapi.LocationQuery, Err: inner}}, 400, "invalid_parameter"},
		{&ogenerrors.DecodeBodyError{ContentType: "application/json", Err: inner}, 400, "invalid_body"},
		{&ogenerrors.DecodeRequestError{Err: inner}, 400, "invalid_request"},
		{&ogenerrors.DecodeRequestError{Err: &http.MaxBytesError{Limit: 1024}}, 413, "request_too_large"},
		{errors.New("something else"), 500, "internal_error"},
	} {
		status, env := answer(t, tc.err)
		require.Equal(t, tc.status, status, tc.err.Error())
		require.Equal(t, tc.code, env.Code)
		if tc.status == 400 {
			require.Contains(t, env.Message, "limit", "validation messages tell the client what to fix")
		}
		if tc.status == 500 {
			require.False(t, strings.Contains(env.Message, "something else"))
		}
	}
}

// decodeBody runs the generated decoder of T over body and wraps its failure as the server does.
func decodeBody[T interface {
	Decode(*jx.Decoder) error
	Validate() error
}](t *testing.T, v T, body string) error {
	t.Helper()
	if err := v.Decode(jx.DecodeStr(body)); err != nil {
		return &ogenerrors.DecodeRequestError{Err: &ogenerrors.DecodeBodyError{ContentType: "application/json", Body: []byte(body), Err: err}}
	}
	err := v.Validate()
	require.Error(t, err, "the body must be refused")
	return &ogenerrors.DecodeRequestError{Err: err}
}

func TestDecodeErrorsNameTheBodyFieldAndTheRuleInWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		code string
		msg  string
	}{
		{"wrong type in an array element", decodeBody(t, &api.CreateAPIKey{},
			`{"name":"k","permissions":1,"allowed_ips":["10.0.0.1",7]}`),
			"invalid_body", "The body field allowed_ips[1] has a value of the wrong type"},
		{"number beyond 64 bits", decodeBody(t, &api.CreateAPIKey{},
			`{"name":"k","permissions":99999999999999999999}`),
			"number_out_of_range", "The body field permissions is outside the range of numbers it accepts."},
		{"text over its maximum", decodeBody(t, &api.CreateAPIKey{},
			`{"name":"`+strings.Repeat("n", 300)+`","permissions":1}`),
			"text_too_long", "The body field name must be at most 255 characters long."},
		{"number under its minimum", decodeBody(t, &api.CreateAPIKey{},
			`{"name":"k","permissions":1,"rate_limit_per_minute":-1}`),
			"invalid_request", "The body field rate_limit_per_minute must be at least 0."},
		{"number beyond 32 bits", decodeBody(t, &api.CreateAPIKey{},
			`{"name":"k","permissions":1,"rate_limit_per_minute":2147483648}`),
			"number_out_of_range", "The body field rate_limit_per_minute must be at most 2147483647."},
		{"value outside its enum", decodeBody(t, &api.WebhookEndpointRequest{},
			`{"url":"https://example.com/h","event_types":["contact.created","contact.exploded"]}`),
			"invalid_request", `The body field event_types[1] must be one of the allowed values, and "contact.exploded" is not.`},
		{"missing required field", decodeBody(t, &api.CreateAPIKey{}, `{"permissions":1}`),
			"invalid_body", "The body field name is required."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, env := answer(t, tc.err)
			require.Equal(t, 400, status)
			require.Equal(t, tc.code, env.Code, env.Message)
			require.Contains(t, env.Message, tc.msg)
			require.NotContains(t, env.Message, "callback", "decoder internals stay in the log")
		})
	}
}
