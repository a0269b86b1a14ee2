package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

// benchTracking compares GET path through the whole request path (token check, network lookup, the event
// handed to the batcher) under concurrent load with a bare net/http handler that answers the same status,
// headers and body, and reports how many events the batcher dropped.
func benchTracking(b *testing.B, env *apitest.Env, path string, want int) {
	ctx := context.Background()
	client := &http.Client{
		Transport:     &http.Transport{MaxIdleConnsPerHost: 256},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	b.Cleanup(client.CloseIdleConnections)
	get := func(b *testing.B, url string) (*http.Response, []byte) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+path, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64)")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatal(resp.Status)
		}
		return resp, body
	}
	// The baseline answers exactly what Outflow answered for the same request.
	sample, body := get(b, env.Server.URL)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for _, h := range []string{"Content-Type", "Cache-Control", "Location"} {
			if v := sample.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		w.WriteHeader(want)
		_, _ = w.Write(body)
	}))
	b.Cleanup(bare.Close)

	for _, target := range []struct{ name, url string }{{"baseline", bare.URL}, {"outflow", env.Server.URL}} {
		b.Run(target.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, target.url)
				}
			})
		})
	}
	if err := env.Tracking.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("tracking events dropped: %d", env.Tracking.Dropped())
}

// benchToken signs a token of kind for a fresh send of a real organization, as a sent message carries it.
func benchToken(b *testing.B, env *apitest.Env, kind tracking.Kind) string {
	signer, err := tracking.NewSigner(env.Config.SecretKey)
	if err != nil {
		b.Fatal(err)
	}
	tok := tracking.Token{Kind: kind, OrganizationID: env.Bootstrap(b, "acme").OrganizationID, TaskID: uuid.New()}
	if kind == tracking.KindClick {
		tok.URL = "https://shop.example.com/spring?utm_source=outflow&utm_medium=email&utm_campaign=spring&utm_content=link-1"
	}
	token, err := signer.Sign(tok)
	if err != nil {
		b.Fatal(err)
	}
	return token
}

// BenchmarkTrackingClick is the click redirect (302 to the link, event recorded) against a bare 302.
func BenchmarkTrackingClick(b *testing.B) {
	env := apitest.New(b)
	benchTracking(b, env, "/t/c/"+benchToken(b, env, tracking.KindClick), http.StatusFound)
}

// BenchmarkTrackingPixel is the open pixel (the GIF, event recorded) against a bare handler writing the GIF.
func BenchmarkTrackingPixel(b *testing.B) {
	env := apitest.New(b)
	benchTracking(b, env, "/t/o/"+benchToken(b, env, tracking.KindOpen), http.StatusOK)
}
