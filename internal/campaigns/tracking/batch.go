package tracking

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/batch"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Received is one open or click as a tracking endpoint received it, before classification: what the token
// proved and what the request showed. It never carries the client address, only its hash and network.
type Received struct {
	// Token is the verified open or click token (organization, send task, link index and URL).
	Token Token
	// At is when the request arrived.
	At time.Time
	// UserAgent is the request's User-Agent header; the writer keeps at most MaxUserAgentLength bytes.
	UserAgent string
	// IPHash is the client address's keyed hash (IPHasher.Hash).
	IPHash string
	// SourceNetwork is the client address's network (SourceNetwork).
	SourceNetwork string
	// Country is the client address's country (ISO 3166-1 alpha-2, "" unknown), resolved while the address
	// is known (engagement.Geo).
	Country string
	// Source is what the network lists said about the address and user agent.
	Source Source
	// TicketIssued is true when the click redirect carried the click identification ticket.
	TicketIssued bool
}

// MaxUserAgentLength bounds the stored user agent (bytes); longer headers are cut, the start is what
// identifies a client.
const MaxUserAgentLength = 512

// Batcher sizes: a flush every flushInterval or every batchSize events, whichever comes first; a queue that
// absorbs several seconds of a send's opens; at most directWriters events written on their own at once.
const (
	batchSize     = 500
	flushInterval = 200 * time.Millisecond
	queueSize     = 10000
	directWriters = 4
)

// Batcher writes tracking events to tracking_events in the background so no pixel or redirect waits on the
// database. Handlers hand events to Add, which never blocks; a writer goroutine stores them in batches (every
// 200 ms or 500 events), one transaction per organization under its row-level security, in which each event
// is judged and what it causes applied (see record). The queue holds
// 10,000 events; when it is full an event is written on its own in the background, at most four such writes
// at a time, and only when those are all busy too is the event dropped, counted (Dropped) and logged. Close
// writes what is queued. Build it with NewBatcher.
type Batcher struct {
	pool    *pgxpool.Pool
	logger  *slog.Logger
	queries *dbq.Queries
	opts    Options

	writer  *batch.Writer[Received]
	direct  chan struct{}
	writes  sync.WaitGroup
	closed  atomic.Bool
	dropped atomic.Int64
}

// NewBatcher starts the background writer over the application pool, judging events by o.
func NewBatcher(pool *pgxpool.Pool, logger *slog.Logger, o Options) *Batcher {
	b := newBatcher(pool, logger, o, queueSize)
	go b.writer.Run()
	return b
}

// newBatcher builds a batcher with a queue of size events whose writer is not started yet.
func newBatcher(pool *pgxpool.Pool, logger *slog.Logger, o Options, size int) *Batcher {
	b := &Batcher{pool: pool, logger: logger, queries: dbq.New(), opts: o, direct: make(chan struct{}, directWriters)}
	b.writer = batch.New(batch.Options[Received]{Queue: size, Size: batchSize, Interval: flushInterval, Write: b.write,
		Failed: func(n int, err error) {
			logger.Error("tracking: write events", slog.Int("events", n), slog.Any("error", err))
		}})
	return b
}

// Add hands e to the writer without waiting: queued, else written on its own in the background, else
// dropped and counted. Events added after Close are dropped.
func (b *Batcher) Add(e Received) {
	if b.closed.Load() {
		b.drop()
		return
	}
	if b.writer.Offer(e) {
		return
	}
	select {
	case b.direct <- struct{}{}:
		b.writes.Add(1)
		go func() {
			defer func() { <-b.direct; b.writes.Done() }()
			if err := b.write([]Received{e}); err != nil {
				b.logger.Error("tracking: write event", slog.Any("error", err))
			}
		}()
	default:
		b.drop()
	}
}

// drop counts a lost event and logs the first and every thousandth, so a flood does not flood the log too.
func (b *Batcher) drop() {
	if n := b.dropped.Add(1); n == 1 || n%1000 == 0 {
		b.logger.Warn("tracking: events dropped, the writer cannot keep up", slog.Int64("dropped", n))
	}
}

// Dropped is how many events were lost because the queue and the direct writers were full (or the batcher
// was closed).
func (b *Batcher) Dropped() int64 { return b.dropped.Load() }

// Flush writes every event queued before the call and returns the first write error.
func (b *Batcher) Flush(ctx context.Context) error { return b.writer.Flush(ctx) }

// Close writes what is queued and what is being written directly, then stops the writer. Call it once the
// handlers have stopped (after the HTTP server's shutdown), so no event is added while it drains.
func (b *Batcher) Close(ctx context.Context) error {
	b.closed.Store(true)
	err := b.writer.Stop(ctx)
	b.writes.Wait()
	return err
}

// attempts is how often one organization's batch is tried when a concurrent transaction gets in the way
// (a deadlock with a send settling, a serialization failure): a retry then succeeds, and giving up loses the
// events.
const attempts = 3

// write stores events, one transaction per organization (see record), retried on a deadlock or
// serialization failure.
func (b *Batcher) write(events []Received) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	byOrg := map[uuid.UUID][]Received{}
	for _, e := range events {
		byOrg[e.Token.OrganizationID] = append(byOrg[e.Token.OrganizationID], e)
	}
	var errs error
	for org, group := range byOrg {
		var err error
		for range attempts {
			err = db.WithOrgTx(ctx, b.pool, org, func(ctx context.Context, tx pgx.Tx) error {
				return b.record(ctx, tx, org, group)
			})
			if !transient(err) {
				break
			}
		}
		errs = errors.Join(errs, err)
	}
	return errs
}

// transient reports whether err is a deadlock or serialization failure, which the same work retried avoids.
func transient(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40P01" || pg.Code == "40001")
}

// storedUserAgent is ua as Postgres text accepts it (valid UTF-8, no NUL) cut to MaxUserAgentLength bytes on
// a character boundary.
func storedUserAgent(ua string) string {
	ua = strings.ReplaceAll(strings.ToValidUTF8(ua, "\uFFFD"), "\x00", "")
	if len(ua) <= MaxUserAgentLength {
		return ua
	}
	cut := MaxUserAgentLength
	for cut > 0 && !utf8.RuneStart(ua[cut]) {
		cut--
	}
	return ua[:cut]
}

// RecordTx judges and stores one organization's events in the caller's transaction, with what they cause,
// exactly as a batch from the endpoints is (an open or click a provider reported, which must commit or roll
// back with the report).
func (b *Batcher) RecordTx(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received) error {
	return b.record(ctx, tx, org, evs)
}
