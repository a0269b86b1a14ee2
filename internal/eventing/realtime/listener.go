package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/uuidv7"
)

// Catch-up after the listener's connection dropped: events announced (acknowledged by the Notifier) from a
// little before the last moment the connection was known alive (a Notifier transaction that started earlier
// may have committed later) are read again and routed; the hub drops the ones it already routed.
const (
	catchUpSlack   = 30 * time.Second
	catchUpHorizon = 10 * time.Minute // events created longer before the outage are not looked for
	catchUpLimit   = 1000             // per organization
)

// ListenerApplicationName names the listener's connection in pg_stat_activity.
const ListenerApplicationName = "outflow-realtime-listener"

// listener holds the instance's one LISTEN connection (a dedicated connection outside the pool, which
// returns connections between queries and would lose the subscription). It reconnects with backoff and,
// after a reconnect, catches up from event_outbox on what it missed, for the organizations that have local
// connections, one organization-scoped transaction each.
type listener struct {
	gw *Gateway

	mu   sync.Mutex
	up   bool
	upCh chan struct{} // closed while the listener is connected and caught up

	done chan struct{}
}

func newListener(g *Gateway) *listener {
	return &listener{gw: g, upCh: make(chan struct{}), done: make(chan struct{})}
}

// waitUp waits until the listener is connected, or ctx ends.
func (l *listener) waitUp(ctx context.Context) bool {
	l.mu.Lock()
	ch := l.upCh
	l.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *listener) setUp(up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if up == l.up {
		return
	}
	l.up = up
	if up {
		close(l.upCh)
	} else {
		l.upCh = make(chan struct{})
	}
}

func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	opts := l.gw.opts
	backoff := opts.ReconnectMin
	var lost time.Time // zero on the first connection: no connection existed before, nothing to catch up
	for ctx.Err() == nil {
		conn, err := l.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			l.gw.logger.LogAttrs(ctx, slog.LevelWarn, "realtime listener cannot connect",
				slog.String("cause", err.Error()), slog.Duration("retry_in", backoff))
			sleep(ctx, backoff/2+rand.N(backoff/2+1))
			backoff = min(2*backoff, opts.ReconnectMax)
			continue
		}
		backoff = opts.ReconnectMin
		if !lost.IsZero() {
			l.catchUp(ctx, lost)
		}
		l.setUp(true)
		lost = l.listen(ctx, conn)
		l.setUp(false)
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_ = conn.Close(closeCtx)
		cancel()
	}
}

func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg := l.gw.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	// Waiting for a notification with a deadline must leave the connection usable: interrupt the read by a
	// socket deadline instead of a cancel request to the server.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: pc.Conn()}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SET ROLE "+db.AppRole); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("set role: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("listen: %w", err)
	}
	return conn, nil
}

// listen routes notifications until the connection fails or ctx ends, checking an idle connection with a
// query every ping interval. It returns the last time the connection was known alive.
func (l *listener) listen(ctx context.Context, conn *pgx.Conn) time.Time {
	alive := time.Now()
	for {
		wait, cancel := context.WithTimeout(ctx, l.gw.opts.ListenerPing)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case err == nil:
			alive = time.Now()
			l.handle(ctx, n.Payload)
			continue
		case ctx.Err() != nil:
			return alive
		case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
			check, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = conn.Exec(check, "SELECT 1")
			cancel()
			if err == nil {
				alive = time.Now()
				continue
			}
		}
		if ctx.Err() == nil {
			l.gw.logger.LogAttrs(ctx, slog.LevelWarn, "realtime listener lost its connection", slog.String("cause", err.Error()))
		}
		return alive
	}
}

// handle routes one notice; a notice without data is read by id in its organization's scope.
func (l *listener) handle(ctx context.Context, payload string) {
	var n notice
	if err := json.Unmarshal([]byte(payload), &n); err != nil || n.ID == uuid.Nil || n.Org == uuid.Nil {
		l.gw.logger.LogAttrs(ctx, slog.LevelWarn, "realtime notice unreadable", slog.Int("bytes", len(payload)))
		return
	}
	if !l.gw.hub.has(n.Org) {
		return
	}
	if !n.Fetch {
		l.gw.hub.route(newEvent(n.ID, n.Org, n.Type, n.CreatedAt, n.Data, n.routing))
		return
	}
	e, err := l.gw.fetch(ctx, n.Org, n.ID)
	if err != nil {
		l.gw.logger.LogAttrs(ctx, slog.LevelError, "realtime event fetch failed",
			slog.String("event_id", n.ID.String()), slog.String("cause", err.Error()))
		return
	}
	if e != nil {
		l.gw.hub.route(e)
	}
}

// catchUp routes the events announced while the listener was not listening.
func (l *listener) catchUp(ctx context.Context, lost time.Time) {
	since := lost.Add(-catchUpSlack)
	floor := uuidv7.Floor(since.Add(-catchUpHorizon))
	for _, org := range l.gw.hub.orgs() {
		var rows []dbq.EventListAnnouncedSinceRow
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := db.WithOrgTx(qctx, l.gw.pool, org, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			rows, err = l.gw.queries.EventListAnnouncedSince(ctx, tx, dbq.EventListAnnouncedSinceParams{
				OrganizationID: org, After: floor, Consumer: ConsumerName, Since: since, MaxRows: catchUpLimit})
			return err
		})
		cancel()
		if err != nil {
			l.gw.logger.LogAttrs(ctx, slog.LevelError, "realtime catch-up failed",
				slog.String("organization_id", org.String()), slog.String("cause", err.Error()))
			continue
		}
		for _, r := range rows {
			l.gw.hub.route(eventFromRow(r.ID, r.OrganizationID, r.EventType, r.CreatedAt, r.Data))
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
