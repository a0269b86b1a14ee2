package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// BenchmarkReadiness compares the whole request path (loopback HTTP, request id, access log and metrics,
// API-key authentication, routing, JSON encoding, the generated client) with calling the readiness handler
// directly: the ratio is the price of the path.
func BenchmarkReadiness(b *testing.B) {
	env := apitest.New(b)
	key := env.Bootstrap(b, "acme").APIKey
	ctx := context.Background()
	system := handlers.NewSystem(env.DB.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	client := env.Client(b, key)
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			if _, err := system.SystemGetReadiness(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			if _, err := client.SystemGetReadiness(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRequestPath compares /healthz through the full middleware chain (request id, access log, metrics,
// panic recovery, body limit) with a bare handler answering the same bytes, both over loopback HTTP.
func BenchmarkRequestPath(b *testing.B) {
	env := apitest.New(b)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	}))
	b.Cleanup(bare.Close)
	get := func(b *testing.B, client *http.Client, url string) {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status)
		}
	}
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			get(b, bare.Client(), bare.URL+"/healthz")
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			get(b, env.Server.Client(), env.Server.URL+"/healthz")
		}
	})
}
