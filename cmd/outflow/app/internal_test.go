package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ogen-go/ogen/ogenerrors"
	"github.com/ogen-go/ogen/openapi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/httpmw"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// stubHandler is the real API handler (with its error mapping) whose readiness answers whatever the test
// wants, to drive each handler error path.
type stubHandler struct {
	*handlers.Handler
	fail func() error
}

func (s *stubHandler) SystemGetReadiness(context.Context) (*api.Readiness, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return &api.Readiness{Ready: true, Checks: []api.ReadinessCheck{}}, nil
}

func TestHandlerErrorsUseTheEnvelopeWithoutInternals(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var next error
	h := &stubHandler{Handler: handlers.New(handlers.Deps{Logger: logger}), fail: func() error { return next }}
	authn := auth.NewAuthenticator(d.Pool, nil)
	root, err := assemble(deps{Logger: logger, Metrics: prometheus.NewRegistry(), Config: config.Config{MaxBodyBytes: 1 << 20}},
		h, handlers.NewSecurity(authn), authn, idempotency.NewStore(d.Pool, logger))
	require.NoError(t, err)
	srv := httptest.NewServer(root)
	t.Cleanup(srv.Close)

	key := bootstrapKey(t, d)
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
	}{
		{"internal", fmt.Errorf("pq: relation secret_table does not exist"), 500, "internal_error", "Something went wrong"},
		{"api error", apierror.Conflict("still_referenced", "Detach it first.").WithFix("Remove it from campaigns."), 409, "still_referenced", "Detach it first."},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), 503, "timeout", "took too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next = tc.err
			req, _ := http.NewRequest("GET", srv.URL+"/v1/system/readiness", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			raw, _ := io.ReadAll(resp.Body)
			var env apierror.Envelope
			require.NoError(t, json.Unmarshal(raw, &env))
			require.Equal(t, tc.code, env.Code)
			require.Contains(t, env.Message, tc.msg)
			require.Equal(t, resp.Header.Get(httpmw.RequestIDHeader), env.RequestID)
			require.NotContains(t, string(raw), "secret_table", "5xx bodies carry no internals")
			if tc.code == "still_referenced" {
				require.Equal(t, "Remove it from campaigns.", env.Fix)
			}
		})
	}
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
		logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
		rec := httptest.NewRecorder()
		apierror.Write(rec, httptest.NewRequest("POST", "/v1/x", nil), logger, decodeError(tc.err))
		require.Equal(t, tc.status, rec.Code, tc.err.Error())
		var env apierror.Envelope
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
		require.Equal(t, tc.code, env.Code)
		if tc.status == 400 {
			require.Contains(t, env.Message, "limit", "validation messages tell the client what to fix")
		}
		if tc.status == 500 {
			require.False(t, strings.Contains(env.Message, "something else"))
		}
	}
}

// bootstrapKey issues a full-access key (apitest cannot be used here: it depends on this package).
func bootstrapKey(t *testing.T, d *dbtest.DB) string {
	t.Helper()
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	return res.APIKey
}
