// Package apitest runs the real HTTP stack (server.New over a per-test database) behind httptest and hands
// out generated-SDK clients, one per credential, so API tests exercise exactly what production serves.
package apitest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outflowhq/outflow/accounts"
	"github.com/outflowhq/outflow/dbtest"
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/server"
)

// Env is one test's running API.
type Env struct {
	// DB is the test's own database.
	DB *dbtest.DB
	// Server serves the full handler; its URL is the deployment root (the API is under /v1).
	Server *httptest.Server
}

// New starts the API over a fresh database and stops it when t ends.
func New(t testing.TB) *Env {
	t.Helper()
	d := dbtest.New(t)
	h, err := server.New(server.Deps{
		Pool:         d.Pool,
		Logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Metrics:      prometheus.NewRegistry(),
		MaxBodyBytes: 1 << 20,
	})
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Env{DB: d, Server: srv}
}

// Bootstrap creates an owner, an organization named org and a full-access API key, as `outflow admin
// bootstrap` does.
func (e *Env) Bootstrap(t testing.TB, org string) accounts.BootstrapResult {
	t.Helper()
	res, err := accounts.Bootstrap(context.Background(), e.DB.Pool, "owner@"+org+".example", "correct horse battery staple", org)
	if err != nil {
		t.Fatalf("apitest: bootstrap: %v", err)
	}
	return res
}

// Client returns a generated-SDK client that sends token as its bearer credential ("" sends none).
func (e *Env) Client(t testing.TB, token string) *api.Client {
	t.Helper()
	c, err := api.NewClient(e.Server.URL+server.APIPrefix, bearer(token), api.WithClient(e.Server.Client()))
	if err != nil {
		t.Fatalf("apitest: client: %v", err)
	}
	return c
}

// Do sends a raw request to path (relative to the deployment root) for tests of what the SDK cannot send.
func (e *Env) Do(t testing.TB, method, path, token string, body io.Reader, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, body)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type bearer string

func (b bearer) BearerAuth(context.Context, api.OperationName) (api.BearerAuth, error) {
	return api.BearerAuth{Token: string(b)}, nil
}
