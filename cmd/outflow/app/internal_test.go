package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

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

// bootstrapKey issues a full-access key (apitest cannot be used here: it depends on this package).
func bootstrapKey(t *testing.T, d *dbtest.DB) string {
	t.Helper()
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	return res.APIKey
}
