package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/platform/db"
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

// BenchmarkTrackingIngest is the batcher's ingestion: events per second handed to it and written (judged,
// with their effects: first opens stamped and counted with their events, human clicks' effects enqueued),
// against the bare insert of the same rows in the same batches (baseline). The events cycle over 1,000
// sends of one campaign: an open through a privacy proxy, a reader's open, a click on each of two links
// from two networks.
func BenchmarkTrackingIngest(b *testing.B) {
	env := apitest.New(b)
	ctx := context.Background()
	boot := env.Bootstrap(b, "acme")
	org, c := boot.OrganizationID, env.Client(b, boot.APIKey)
	camp := campCreate(b, c, api.CampaignCreate{Name: "Bench", Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("Hi"),
		BodyPlain: api.NewOptString("Hello")}}})
	const sends = 1000
	var tasks []uuid.UUID
	err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH c AS (
			  INSERT INTO contacts (organization_id, id, email)
			  SELECT $1, gen_random_uuid(), 'lead' || n || '@example.net' FROM generate_series(1, $3::int) AS n RETURNING id),
			l AS (INSERT INTO campaign_leads (organization_id, campaign_id, contact_id) SELECT $1, $2, id FROM c)
			INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, campaign_id, sent_at)
			SELECT $1, gen_random_uuid(), 'campaign', 'sent', id, 'lead@example.net', $2, now() - interval '1 hour' FROM c
			RETURNING id`, org, camp.ID, sends)
		if err != nil {
			return err
		}
		tasks, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	event := func(i int) tracking.Received {
		tok := tracking.Token{Kind: tracking.KindOpen, OrganizationID: org, TaskID: tasks[i/4%sends]}
		e := tracking.Received{At: time.Now(), UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64)", IPHash: "reader",
			SourceNetwork: "192.0.2.0/24"}
		switch i % 4 {
		case 0:
			e.Source.PrivacyProxy, e.IPHash, e.SourceNetwork = "Apple Mail Privacy Protection", "proxy", "17.58.0.0/24"
		case 2, 3:
			tok.Kind, tok.LinkIndex, tok.URL = tracking.KindClick, i%4-2, "https://shop.example.com/spring?utm_source=outflow"
			e.IPHash, e.SourceNetwork = fmt.Sprint("reader", i%4), fmt.Sprintf("198.51.%d.0/24", i%4)
		}
		e.Token = tok
		return e
	}
	const chunk = 5000 // within the batcher's queue, so nothing is dropped or written around it
	b.Run("baseline", func(b *testing.B) {
		q := dbq.New()
		for start := 0; start < b.N; start += 500 {
			p := dbq.TrackingEventsInsertParams{OrganizationID: org}
			for i := start; i < min(start+500, b.N); i++ {
				e := event(i)
				kind := map[tracking.Kind]string{tracking.KindOpen: "open", tracking.KindClick: "click"}[e.Token.Kind]
				p.Ids, p.TaskIds, p.Kinds, p.Ats = append(p.Ids, uuid.New()), append(p.TaskIds, e.Token.TaskID), append(p.Kinds, kind), append(p.Ats, e.At)
				p.Uas, p.IpHashes, p.Networks = append(p.Uas, e.UserAgent), append(p.IpHashes, e.IPHash), append(p.Networks, e.SourceNetwork)
				p.Scanners, p.Probables, p.Proxies = append(p.Scanners, ""), append(p.Probables, false), append(p.Proxies, e.Source.PrivacyProxy != "")
				p.LinkIndexes, p.Urls, p.Tickets = append(p.LinkIndexes, int32(e.Token.LinkIndex)), append(p.Urls, e.Token.URL), append(p.Tickets, false)
				p.Verdicts, p.Rules = append(p.Verdicts, "human"), append(p.Rules, "human")
				p.Dues, p.Pendings, p.Countries = append(p.Dues, e.At), append(p.Pendings, false), append(p.Countries, "")
			}
			if err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
				_, err := q.TrackingEventsInsert(ctx, tx, p)
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("outflow", func(b *testing.B) {
		for i := range b.N {
			env.Tracking.Add(event(i))
			if (i+1)%chunk == 0 {
				if err := env.Tracking.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := env.Tracking.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		if n := env.Tracking.Dropped(); n > 0 {
			b.Fatalf("%d events dropped", n)
		}
	})
}
