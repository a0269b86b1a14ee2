package usage

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/batch"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Entry is one authenticated API-key request.
type Entry struct {
	OrganizationID uuid.UUID
	APIKeyID       uuid.UUID
	// Endpoint is the route template (`/api-keys/{id}`), never the concrete path, so ids and tokens in paths
	// stay out of the log and endpoints group.
	Endpoint  string
	Method    string
	IP        string
	UserAgent string
	Status    int
	Latency   time.Duration
	At        time.Time
}

// Queue and batch sizes: the queue absorbs bursts of several seconds at thousands of requests per second.
const (
	queueSize     = 16384
	batchSize     = 1000
	flushInterval = 500 * time.Millisecond
)

// Recorder queues entries and writes them in the background. The zero value is not usable; build it with
// NewRecorder and stop it with Close.
type Recorder struct {
	pool    *pgxpool.Pool
	logger  *slog.Logger
	queries *dbq.Queries

	writer  *batch.Writer[Entry]
	dropped atomic.Int64
}

// NewRecorder starts the background writer over the application pool.
func NewRecorder(pool *pgxpool.Pool, logger *slog.Logger) *Recorder {
	r := newRecorder(pool, logger, queueSize)
	go r.writer.Run()
	return r
}

// newRecorder builds a recorder with a queue of size entries whose writer is not started yet.
func newRecorder(pool *pgxpool.Pool, logger *slog.Logger, size int) *Recorder {
	r := &Recorder{pool: pool, logger: logger, queries: dbq.New()}
	r.writer = batch.New(batch.Options[Entry]{Queue: size, Size: batchSize, Interval: flushInterval, Write: r.write,
		Failed: func(n int, err error) {
			logger.Error("usage: write request log", slog.Int("entries", n), slog.Any("error", err))
		}})
	return r
}

// Record queues e without blocking; when the queue is full the entry is dropped and counted.
func (r *Recorder) Record(e Entry) {
	if !r.writer.Offer(e) {
		r.dropped.Add(1)
	}
}

// Dropped is how many entries were dropped because the queue was full.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Flush writes every entry queued before the call and returns the first write error.
func (r *Recorder) Flush(ctx context.Context) error { return r.writer.Flush(ctx) }

// Close writes what is queued and stops the writer; later entries are dropped.
func (r *Recorder) Close(ctx context.Context) error {
	err := r.writer.Stop(ctx)
	if n := r.dropped.Load(); n > 0 {
		r.logger.Warn("usage: request log entries dropped", slog.Int64("dropped", n))
	}
	return err
}

// write stores one batch: per organization, the log rows and each key's newest use, in one transaction.
func (r *Recorder) write(batch []Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	byOrg := map[uuid.UUID][]Entry{}
	for _, e := range batch {
		byOrg[e.OrganizationID] = append(byOrg[e.OrganizationID], e)
	}
	var errs error
	for org, entries := range byOrg {
		errs = errors.Join(errs, db.WithOrgTx(ctx, r.pool, org, func(ctx context.Context, tx pgx.Tx) error {
			return r.writeOrg(ctx, tx, org, entries)
		}))
	}
	return errs
}

func (r *Recorder) writeOrg(ctx context.Context, tx pgx.Tx, org uuid.UUID, entries []Entry) error {
	p := dbq.APIKeyUsageInsertParams{OrganizationID: org}
	newest := map[uuid.UUID]Entry{}
	for _, e := range entries {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		ms := e.Latency.Milliseconds()
		p.Ids = append(p.Ids, id)
		p.ApiKeyIds = append(p.ApiKeyIds, e.APIKeyID)
		p.Endpoints = append(p.Endpoints, e.Endpoint)
		p.Methods = append(p.Methods, e.Method)
		p.Ips = append(p.Ips, e.IP)
		p.Uas = append(p.Uas, e.UserAgent)
		p.Codes = append(p.Codes, int32(e.Status))
		p.Ms = append(p.Ms, int32(min(ms, 1<<31-1)))
		p.Ats = append(p.Ats, e.At)
		if n, ok := newest[e.APIKeyID]; !ok || e.At.After(n.At) {
			newest[e.APIKeyID] = e
		}
	}
	if _, err := r.queries.APIKeyUsageInsert(ctx, tx, p); err != nil {
		return err
	}
	touch := dbq.APIKeyTouchParams{OrganizationID: org}
	for id, e := range newest {
		touch.Ids = append(touch.Ids, id)
		touch.Ats = append(touch.Ats, e.At)
		touch.Ips = append(touch.Ips, e.IP)
	}
	return r.queries.APIKeyTouch(ctx, tx, touch)
}

// Retention is how long request logs are kept; analytics never look further back.
const Retention = 90 * 24 * time.Hour

// Sweep deletes request logs older than Retention in every organization and returns how many it removed.
func Sweep(ctx context.Context, pool *pgxpool.Pool, now time.Time) (int64, error) {
	return dbq.New().APIKeyUsageSweep(ctx, pool, now.Add(-Retention))
}
