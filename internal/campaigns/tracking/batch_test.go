package tracking

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// storedEvents lists every tracking event (read past RLS) in time order as its organization, task, kind,
// user agent, link index, URL, scanner facts and ticket.
func storedEvents(t *testing.T, d *dbtest.DB) []string {
	t.Helper()
	rows, err := d.OwnerPool(t).Query(context.Background(),
		`SELECT organization_id, task_id, kind, user_agent, coalesce(link_index, -1), coalesce(url, ''), ip_hash,
		        source_network, scanner, scanner_probable, privacy_proxy, ticket_issued, verdict IS NOT NULL AND rule IS NOT NULL
		 FROM tracking_events ORDER BY at, id`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var org, task uuid.UUID
		var kind, ua, url, hash, network, scanner string
		var link int
		var probable, proxy, ticket, judged bool
		require.NoError(t, rows.Scan(&org, &task, &kind, &ua, &link, &url, &hash, &network, &scanner, &probable, &proxy, &ticket, &judged))
		require.True(t, judged, "every stored event has its verdict and rule")
		got = append(got, fmt.Sprint(org, task, kind, len(ua), link, url, hash, network, scanner, probable, proxy, ticket))
	}
	require.NoError(t, rows.Err())
	return got
}

// testOptions judge by the default windows and raise events and jobs through an insert-only River client.
func testOptions(t *testing.T, d *dbtest.DB) Options {
	t.Helper()
	inserter, err := river.NewClient(riverpgxv5.New(d.Pool), &river.Config{})
	require.NoError(t, err)
	return Options{Windows: DefaultWindows(), Outbox: events.NewOutbox(inserter)}
}

func TestBatcherWritesHandedOverEventsPerOrganizationOnFlushAndClose(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	acme, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	globex, err := accounts.Bootstrap(ctx, d.Pool, "owner@globex.example", "correct horse battery staple", "globex")
	require.NoError(t, err)
	taskA, taskB := uuid.New(), uuid.New()
	at := time.Now().UTC()

	b := NewBatcher(d.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), testOptions(t, d))
	b.Add(Received{Token: Token{Kind: KindOpen, OrganizationID: acme.OrganizationID, TaskID: taskA}, At: at,
		UserAgent: strings.Repeat("é", 400) + "\x00", IPHash: "hashA", SourceNetwork: "192.0.2.0/24",
		Source: Source{PrivacyProxy: "Apple Mail Privacy Protection"}})
	b.Add(Received{Token: Token{Kind: KindClick, OrganizationID: globex.OrganizationID, TaskID: taskB, LinkIndex: 3,
		URL: "https://example.com/a?utm_source=outflow"}, At: at.Add(time.Second), UserAgent: "Mozilla/5.0",
		IPHash: "hashB", SourceNetwork: "2001:db8::/48", Source: Source{Scanner: "Hosting", ScannerProbable: true}})
	require.NoError(t, b.Flush(ctx))
	require.Equal(t, []string{
		fmt.Sprint(acme.OrganizationID, taskA, "open", 512, -1, "", "hashA", "192.0.2.0/24", "", false, true, false),
		fmt.Sprint(globex.OrganizationID, taskB, "click", 11, 3, "https://example.com/a?utm_source=outflow", "hashB",
			"2001:db8::/48", "Hosting", true, false, false),
	}, storedEvents(t, d), "each event lands in its own organization, the user agent cut to 512 bytes on a character boundary")

	b.Add(Received{Token: Token{Kind: KindClick, OrganizationID: acme.OrganizationID, TaskID: taskA, URL: "https://example.com/"},
		At: at.Add(2 * time.Second), UserAgent: "Mozilla/5.0", TicketIssued: true})
	require.NoError(t, b.Close(ctx))
	got := storedEvents(t, d)
	require.Len(t, got, 3, "Close writes what was queued")
	require.Equal(t, fmt.Sprint(acme.OrganizationID, taskA, "click", 11, 0, "https://example.com/", "", "", "", false, false, true), got[2])

	b.Add(Received{Token: Token{Kind: KindOpen, OrganizationID: acme.OrganizationID, TaskID: taskA}, At: at})
	require.Equal(t, int64(1), b.Dropped(), "an event after Close is dropped and counted")
}

func TestBatcherWritesOverflowDirectlyAndDropsOnlyWhenDirectWritersAreBusy(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	acme, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	open := Received{Token: Token{Kind: KindOpen, OrganizationID: acme.OrganizationID, TaskID: uuid.New()}, At: time.Now()}

	// The writer is not running and the queue holds one event: the second is written on its own.
	b := newBatcher(d.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), testOptions(t, d), 1)
	b.Add(open)
	b.Add(open)
	b.writes.Wait()
	require.Len(t, storedEvents(t, d), 1, "the overflowing event was written directly")
	require.Zero(t, b.Dropped())

	// Every direct writer busy: the next overflowing event is dropped and counted, never waited for.
	for range directWriters {
		b.direct <- struct{}{}
	}
	b.Add(open)
	require.Equal(t, int64(1), b.Dropped())
	for range directWriters {
		<-b.direct
	}

	go b.writer.Run()
	require.NoError(t, b.Close(ctx))
	require.Len(t, storedEvents(t, d), 2, "Close wrote the queued event")
}

func TestBatcherJudgesAClickOfASendThatNoLongerExistsAndGivesItNoEffects(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	acme, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	b := NewBatcher(d.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), testOptions(t, d))
	b.Add(Received{Token: Token{Kind: KindClick, OrganizationID: acme.OrganizationID, TaskID: uuid.New(), URL: "https://example.com/"},
		At: time.Now(), UserAgent: "Mozilla/5.0", IPHash: "h", SourceNetwork: "192.0.2.0/24"})
	require.NoError(t, b.Close(ctx))
	var verdict, rule string
	var pending bool
	var jobs int
	owner := d.OwnerPool(t)
	require.NoError(t, owner.QueryRow(ctx, `SELECT verdict, rule, effects_due_at IS NOT NULL FROM tracking_events`).Scan(&verdict, &rule, &pending))
	require.Equal(t, []string{"human", "human"}, []string{verdict, rule}, "with no dispatch time known, no window applies")
	require.False(t, pending, "a deleted send has nothing to stamp or count")
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'tracking_click_effects'`).Scan(&jobs))
	require.Zero(t, jobs)
}

func TestBatcherJudgesTwoLinksClickedInOneBatchAsABurst(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	acme, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	task, at := uuid.New(), time.Now()
	click := func(link int, after time.Duration) Received {
		return Received{Token: Token{Kind: KindClick, OrganizationID: acme.OrganizationID, TaskID: task, LinkIndex: link,
			URL: "https://example.com/"}, At: at.Add(after), UserAgent: "Mozilla/5.0", IPHash: "h", SourceNetwork: "192.0.2.0/24"}
	}
	// The writer starts only once both are queued, so they are judged in one batch.
	b := newBatcher(d.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), testOptions(t, d), 10)
	b.Add(click(0, 0))
	b.Add(click(1, DefaultWindows().Burst))
	b.Add(click(0, time.Hour))
	go b.writer.Run()
	require.NoError(t, b.Close(ctx))
	rows, err := d.OwnerPool(t).Query(ctx, `SELECT link_index || ' ' || verdict || ' ' || rule FROM tracking_events ORDER BY at`)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"0 machine burst", "1 machine burst", "0 human human"}, got,
		"each click of the pair sees the other, at the window's edge; an hour later is another matter")
}
