package usage

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
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

	queue   chan Entry
	flushes chan chan error
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

// NewRecorder starts the background writer over the application pool.
func NewRecorder(pool *pgxpool.Pool, logger *slog.Logger) *Recorder {
	r := newRecorder(pool, logger, queueSize)
	go r.run()
	return r
}

// newRecorder builds a recorder with a queue of size entries whose writer is not started yet.
func newRecorder(pool *pgxpool.Pool, logger *slog.Logger, size int) *Recorder {
	return &Recorder{
		pool: pool, logger: logger, queries: dbq.New(),
		queue: make(chan Entry, size), flushes: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{}),
	}
}

// Record queues e without blocking; when the queue is full the entry is dropped and counted.
func (r *Recorder) Record(e Entry) {
	select {
	case r.queue <- e:
	default:
		r.dropped.Add(1)
	}
}

// Dropped is how many entries were dropped because the queue was full.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Flush writes every entry queued before the call and returns the first write error.
func (r *Recorder) Flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case r.flushes <- reply:
	case <-r.done:
		return errors.New("usage: recorder closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close writes what is queued and stops the writer; later entries are dropped.
func (r *Recorder) Close(ctx context.Context) error {
	err := r.Flush(ctx)
	r.once.Do(func() { close(r.stop) })
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return err
}

func (r *Recorder) run() {
	defer close(r.done)
	ticker := time.NewTicker(flushInterval)
	defer ticker.Stop()
	batch := make([]Entry, 0, batchSize)
	write := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := r.write(batch)
		if err != nil {
			r.logger.Error("usage: write request log", slog.Int("entries", len(batch)), slog.Any("error", err))
		}
		batch = batch[:0]
		return err
	}
	drain := func() error {
		var first error
		for {
			select {
			case e := <-r.queue:
				batch = append(batch, e)
				if len(batch) == batchSize {
					first = errors.Join(first, write())
				}
			default:
				return errors.Join(first, write())
			}
		}
	}
	for {
		select {
		case e := <-r.queue:
			batch = append(batch, e)
			if len(batch) == batchSize {
				_ = write()
			}
		case <-ticker.C:
			_ = write()
		case reply := <-r.flushes:
			reply <- drain()
		case <-r.stop:
			_ = drain()
			if n := r.dropped.Load(); n > 0 {
				r.logger.Warn("usage: request log entries dropped", slog.Int64("dropped", n))
			}
			return
		}
	}
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
