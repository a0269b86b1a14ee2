package handlers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// fixedCaller is a security handler that trusts every request as one principal: the baseline's "no auth".
type fixedCaller struct{ p *auth.Principal }

func (f fixedCaller) HandleBearerAuth(ctx context.Context, _ api.OperationName, _ api.BearerAuth) (context.Context, error) {
	return auth.WithPrincipal(ctx, f.p), nil
}

// BenchmarkAuthenticatedGet compares GET /v1/api-keys/permissions through the whole request path with a real
// API key (hash lookup, IP and expiry checks, the shared sliding-window rate limit, the usage log) with the
// same handler served over loopback HTTP behind a security handler that trusts every request.
func BenchmarkAuthenticatedGet(b *testing.B) {
	env := apitest.New(b)
	boot := env.Bootstrap(b, "acme")
	ctx := context.Background()
	key := newKey(b, env.Client(b, boot.APIKey), api.CreateAPIKey{Name: "bench", Permissions: int64(auth.APIKeys),
		RateLimitPerMinute: api.NewOptInt(auth.MaxRateLimitPerMinute)})

	h := handlers.New(handlers.Deps{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), APIKeys: handlers.NewAPIKeys(env.DB.Pool, []byte("bench-secret-bench-secret-bench-"))})
	bare, err := api.NewServer(h, h, fixedCaller{p: &auth.Principal{Kind: auth.KindAPIKey, CredentialID: uuid.New(),
		OrganizationID: boot.OrganizationID, Permissions: auth.APIKeys}}, api.WithPathPrefix("/v1"))
	if err != nil {
		b.Fatal(err)
	}
	baseline := httptest.NewServer(bare)
	b.Cleanup(baseline.Close)

	get := func(b *testing.B, url string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/api-keys/permissions", nil)
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		resp, err := http.DefaultClient.Do(req)
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
			get(b, baseline.URL)
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			get(b, env.Server.URL)
		}
	})
}
