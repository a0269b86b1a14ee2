package realtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Options tunes a gateway; zero values take the defaults.
type Options struct {
	// SendBuffer is how many frames may wait for one slow client before it is disconnected (256).
	SendBuffer int
	// ReplayLimit is the most events a resume replays; more missed means "resync" (1000).
	ReplayLimit int
	// ReplayWindow is how old a resume's last_event_id may be (24 h).
	ReplayWindow time.Duration
	// PingInterval is how often clients are pinged (30 s).
	PingInterval time.Duration
	// WriteTimeout bounds one frame's write and a ping's answer (10 s).
	WriteTimeout time.Duration
	// RevalidateInterval is how often a connection's credential is verified again (1 min).
	RevalidateInterval time.Duration
	// ReadyTimeout is how long an upgrade waits for the listener to be connected before answering 503 (5 s).
	ReadyTimeout time.Duration
	// ListenerPing is how long the listener waits for a notification before checking its connection (15 s).
	ListenerPing time.Duration
	// ReconnectMin and ReconnectMax bound the listener's reconnect backoff (100 ms, 30 s).
	ReconnectMin, ReconnectMax time.Duration
}

func (o Options) withDefaults() Options {
	o.SendBuffer = cmp.Or(o.SendBuffer, 256)
	o.ReplayLimit = cmp.Or(o.ReplayLimit, 1000)
	o.ReplayWindow = cmp.Or(o.ReplayWindow, 24*time.Hour)
	o.PingInterval = cmp.Or(o.PingInterval, 30*time.Second)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, 10*time.Second)
	o.RevalidateInterval = cmp.Or(o.RevalidateInterval, time.Minute)
	o.ReadyTimeout = cmp.Or(o.ReadyTimeout, 5*time.Second)
	o.ListenerPing = cmp.Or(o.ListenerPing, 15*time.Second)
	o.ReconnectMin = cmp.Or(o.ReconnectMin, 100*time.Millisecond)
	o.ReconnectMax = cmp.Or(o.ReconnectMax, 30*time.Second)
	return o
}

// Verifier re-checks a connection's credential while it stays open; *auth.Authenticator is one.
type Verifier interface {
	Authenticate(ctx context.Context, token string) (*auth.Principal, error)
}

// Gateway is one API instance's realtime gateway: the WebSocket endpoint, its local connections and the
// listener that hears every instance's event notices. Its listener starts with the first connection; its
// owner calls Close after the HTTP server has shut down (http.Server.Shutdown leaves upgraded connections
// open).
type Gateway struct {
	pool     *pgxpool.Pool
	logger   *slog.Logger
	opts     Options
	queries  *dbq.Queries
	hub      *hub
	listener *listener
	verifier Verifier

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	started bool
	closed  bool
	active  sync.WaitGroup // connections being served
}

// New builds a gateway over the application pool. Nothing runs until the first connection.
func New(pool *pgxpool.Pool, logger *slog.Logger, opts Options) *Gateway {
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{pool: pool, logger: logger, opts: opts.withDefaults(), queries: dbq.New(), hub: newHub(),
		ctx: ctx, cancel: cancel}
	g.listener = newListener(g)
	return g
}

// Handler returns the GET /v1/realtime endpoint. It expects the API's credential layer in front of it
// (auth.OutcomeFrom) and, in front of that, Credentials; v re-verifies open connections' credentials (nil:
// never).
func (g *Gateway) Handler(v Verifier) http.Handler {
	g.mu.Lock()
	g.verifier = v
	g.mu.Unlock()
	return http.HandlerFunc(g.serveHTTP)
}

// Credentials adapts a browser's upgrade request to the API's credential layer: a `bearer.<token>` value of
// Sec-WebSocket-Protocol becomes the Authorization header (and is removed from the offered subprotocols, so
// it can never be selected and echoed), and ?organization_id= selects a session's organization as the
// X-Organization-Id header does. Tokens are never read from the URL.
func (g *Gateway) Credentials(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var token string
		var offered []string
		for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
			for _, v := range strings.Split(h, ",") {
				v = strings.TrimSpace(v)
				if t, ok := strings.CutPrefix(v, BearerProtocolPrefix); ok {
					token = cmp.Or(token, t)
					continue
				}
				if v != "" {
					offered = append(offered, v)
				}
			}
		}
		org := r.URL.Query().Get("organization_id")
		if token == "" && org == "" {
			next.ServeHTTP(w, r)
			return
		}
		if token != "" && !slices.Contains(offered, Subprotocol) {
			apierror.Write(w, r, g.logger, apierror.BadRequest("subprotocol_required",
				fmt.Sprintf("Offer the subprotocol %q beside the bearer value.", Subprotocol)))
			return
		}
		ctx := r.Context()
		if info := reqctx.From(ctx); org != "" && info.Organization == "" {
			info.Organization = clip(org)
			ctx = reqctx.With(ctx, info)
		}
		r = r.Clone(ctx)
		if token != "" {
			r.Header.Del("Sec-WebSocket-Protocol")
			r.Header.Set("Sec-WebSocket-Protocol", strings.Join(offered, ", "))
			if r.Header.Get("Authorization") == "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		apierror.Write(w, r, g.logger, apierror.New(http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s is not allowed here; allowed: GET.", r.Method)))
		return
	}
	p, err, _ := auth.OutcomeFrom(r.Context())
	if err != nil {
		apierror.Write(w, r, g.logger, err)
		return
	}
	if err := admit(p); err != nil {
		apierror.Write(w, r, g.logger, err)
		return
	}
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Upgrade", "websocket")
		apierror.Write(w, r, g.logger, apierror.New(http.StatusUpgradeRequired, "upgrade_required",
			"This endpoint speaks WebSocket: send an upgrade request."))
		return
	}
	if !g.start() {
		apierror.Write(w, r, g.logger, unavailable())
		return
	}
	ready, cancel := context.WithTimeout(r.Context(), g.opts.ReadyTimeout)
	up := g.listener.waitUp(ready)
	cancel()
	if !up {
		apierror.Write(w, r, g.logger, unavailable())
		return
	}
	// Hijacking clears the server's read and write deadlines, so the connection outlives its timeouts.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// Cross-origin pages may connect: the credential is a bearer token the page must present itself,
		// never an ambient cookie, so a foreign page gains nothing it did not already hold.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return // Accept answered the request
	}
	ws.SetReadLimit(MaxFrameBytes)
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	c := newConn(g, ws, p, strings.TrimSpace(token), r)
	if !g.register(c) {
		_ = ws.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	defer g.unregister(c)
	c.run()
}

func unavailable() *apierror.Error {
	e := apierror.Unavailable("realtime_unavailable", "The realtime gateway is not connected to the database; retry shortly.")
	e.RetryAfter = 5
	return e
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// start runs the listener if it is not running yet; false once the gateway is closed.
func (g *Gateway) start() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	if !g.started {
		g.started = true
		go g.listener.run(g.ctx)
	}
	return true
}

func (g *Gateway) register(c *conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.active.Add(1)
	g.hub.add(c)
	return true
}

func (g *Gateway) unregister(c *conn) {
	g.hub.remove(c)
	g.active.Done()
}

// Close stops the listener and closes every connection with 1001 (going away), waiting for them until ctx
// ends. Clients reconnect to another instance and resume with last_event_id.
func (g *Gateway) Close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	started := g.started
	g.mu.Unlock()
	g.cancel()
	for _, c := range g.hub.all() {
		c.closeWith(websocket.StatusGoingAway, "server shutting down")
	}
	done := make(chan struct{})
	go func() {
		g.active.Wait()
		if started {
			<-g.listener.done
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("realtime: close: %w", ctx.Err())
	}
}

// fetch reads one announced event (one the Notifier acknowledged) in its organization's scope (nil when it is
// gone).
func (g *Gateway) fetch(ctx context.Context, org, id uuid.UUID) (*event, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var e *event
	err := db.WithOrgTx(ctx, g.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := g.queries.EventGetAnnounced(ctx, tx, dbq.EventGetAnnouncedParams{OrganizationID: org, ID: id, Consumer: ConsumerName})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		e = eventFromRow(row.ID, row.OrganizationID, row.EventType, row.CreatedAt, row.Data)
		return nil
	})
	return e, err
}
