package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/uuidv7"
)

// seenGrace is how long a resumed connection keeps the ids it replayed, so the live notice of an event the
// replay already sent (committed just before the replay read, heard just after) is dropped.
const seenGrace = 2 * time.Minute

// conn is one WebSocket client: its credential, its intents and its bounded send buffer. Three goroutines
// serve it: the reader (client frames, resumes), the writer (the only one writing data frames, in order) and
// the keepalive (pings and credential re-checks). The hub offers events from the listener's goroutine.
type conn struct {
	gw  *Gateway
	ws  *websocket.Conn
	org uuid.UUID
	// token is the connection's credential, kept in memory only to re-verify it.
	token string
	// reqCtx carries the upgrade request's facts (request id, client address, organization choice) for the
	// re-checks and the logs; it ends when the connection starts closing, not with the upgrade request.
	reqCtx context.Context
	cancel context.CancelFunc

	out     chan []byte
	done    chan struct{} // closed when the connection starts closing
	closed  chan struct{} // closed when the WebSocket is closed
	closing atomic.Bool
	wg      sync.WaitGroup

	mu         sync.Mutex
	principal  *auth.Principal
	topics     map[string]struct{}
	filters    map[filter]struct{}
	subscribed bool      // a subscribe frame was accepted (last_event_id is honoured only on the first)
	replaying  bool      // a resume is sending stored events: live events wait in held
	held       []*event  // live events that arrived during the resume, in arrival order
	seen       *idWindow // ids the resume sent; live copies of them are dropped until seenUntil
	seenUntil  time.Time
}

func newConn(g *Gateway, ws *websocket.Conn, p *auth.Principal, token string, r *http.Request) *conn {
	reqCtx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	return &conn{
		gw: g, ws: ws, org: p.OrganizationID, token: token, reqCtx: reqCtx, cancel: cancel,
		out: make(chan []byte, g.opts.SendBuffer), done: make(chan struct{}), closed: make(chan struct{}),
		principal: p, topics: map[string]struct{}{}, filters: map[filter]struct{}{},
	}
}

// run serves the connection until either side closes it.
func (c *conn) run() {
	c.out <- encode(readyFrame{Type: frameReady, OrganizationID: c.org, UserID: c.principal.UserID})
	c.wg.Add(2)
	go c.writeLoop()
	go c.keepalive()
	c.readLoop()
	c.closeWith(websocket.StatusNormalClosure, "")
	<-c.closed
	c.wg.Wait()
}

// closeWith starts closing the connection with code (once; later calls do nothing). It never blocks: the
// close handshake runs on its own goroutine, bounded by the library's 5 s timeouts.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	if !c.closing.CompareAndSwap(false, true) {
		return
	}
	close(c.done)
	c.cancel()
	go func() {
		defer close(c.closed)
		_ = c.ws.Close(code, reason)
	}()
}

func (c *conn) readLoop() {
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.sendError("", codeInvalidFrame, "Frames are JSON text messages.")
			continue
		}
		var f clientFrame
		if err := json.Unmarshal(data, &f); err != nil {
			c.sendError("", codeInvalidFrame, "The frame is not a JSON object of the protocol.")
			continue
		}
		f.RequestID = clip(f.RequestID)
		switch f.Type {
		case frameSubscribe:
			c.subscribe(f)
		case frameUnsubscribe:
			c.unsubscribe(f)
		case framePing:
			c.send(encode(pongFrame{Type: framePong, RequestID: f.RequestID}))
		default:
			c.sendError(f.RequestID, codeUnknownFrameTyp, "Frame type must be subscribe, unsubscribe or ping.")
		}
	}
}

// send queues a frame from the reader, waiting for room: the reader may block, the hub never does.
func (c *conn) send(frame []byte) bool {
	select {
	case c.out <- frame:
		return true
	case <-c.done:
		return false
	}
}

func (c *conn) sendError(requestID, code, message string) {
	c.send(encode(errorFrame{Type: frameError, RequestID: requestID, Code: code, Message: message}))
}

func (c *conn) writeLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case frame := <-c.out:
			ctx, cancel := context.WithTimeout(context.Background(), c.gw.opts.WriteTimeout)
			err := c.ws.Write(ctx, websocket.MessageText, frame)
			cancel()
			if err != nil {
				// The library closed the connection (timeout or a dead peer); nothing more can be sent.
				c.closeWith(websocket.StatusGoingAway, "write failed")
				return
			}
		}
	}
}

// keepalive pings the client (a dead peer is noticed within a ping interval) and re-verifies the
// credential, so a revoked key or an expired session stops receiving events.
func (c *conn) keepalive() {
	defer c.wg.Done()
	ping := time.NewTicker(c.gw.opts.PingInterval)
	defer ping.Stop()
	recheck := time.NewTicker(c.gw.opts.RevalidateInterval)
	defer recheck.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-ping.C:
			ctx, cancel := context.WithTimeout(context.Background(), c.gw.opts.WriteTimeout)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				c.closeWith(websocket.StatusGoingAway, "ping timeout")
				return
			}
		case <-recheck.C:
			c.revalidate()
		}
	}
}

func (c *conn) revalidate() {
	if c.gw.verifier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.reqCtx, 10*time.Second)
	defer cancel()
	p, err := c.gw.verifier.Authenticate(ctx, c.token)
	if err != nil {
		var ae *apierror.Error
		if errors.As(err, &ae) && ae.Status < 500 && ae.Status != 429 {
			c.closeWith(CloseCredentialInvalid, "credential no longer valid")
		}
		// Anything else (the database unreachable a moment) keeps the connection: the next check decides.
		return
	}
	if admit(p) != nil || p.OrganizationID != c.org {
		c.closeWith(CloseCredentialInvalid, "credential no longer valid")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.principal = p
	for t := range c.topics {
		kind, id, _ := parseTopic(t)
		if maySubscribe(p, kind, id) != nil {
			delete(c.topics, t)
		}
	}
}

// offer is the hub's hand-off of a live event. It never blocks: a client whose buffer is full is closed as
// too slow (the gateway is lossy on disconnect; the client resumes with last_event_id).
func (c *conn) offer(e *event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing.Load() || !c.wantsLocked(e) {
		return
	}
	if c.seen != nil {
		if !c.replaying && time.Now().After(c.seenUntil) {
			c.seen = nil
		} else if c.seen.has(e.id) {
			return
		}
	}
	if c.replaying {
		if len(c.held) >= cap(c.out) {
			c.slow()
			return
		}
		c.held = append(c.held, e)
		return
	}
	select {
	case c.out <- e.liveFrame():
	default:
		c.slow()
	}
}

func (c *conn) slow() {
	c.gw.logger.LogAttrs(c.reqCtx, slog.LevelInfo, "realtime client too slow, disconnected",
		slog.String("request_id", reqctx.ID(c.reqCtx)), slog.String("organization_id", c.org.String()))
	c.closeWith(CloseSlowConsumer, "too slow: send buffer full; reconnect with last_event_id")
}

// wantsLocked reports whether the connection receives e: a subscribed topic, the event filters, and the
// credential's right to the event's family.
func (c *conn) wantsLocked(e *event) bool {
	if len(c.topics) == 0 || !mayReceive(c.principal, e) || !matchFilters(c.filters, e.info) {
		return false
	}
	for _, t := range e.topicList {
		if _, ok := c.topics[t]; ok {
			return true
		}
	}
	return false
}

// intents parses a subscribe or unsubscribe frame's topics and filters; every one must be well formed
// (and, to subscribe, allowed) or the whole frame is refused.
func (c *conn) intents(f clientFrame, subscribing bool, p *auth.Principal) ([]string, []filter, error) {
	if len(f.Topics) > MaxTopics || len(f.Events) > MaxEventFilters {
		return nil, nil, refuse(codeTooMany, "At most %d topics and %d event filters.", MaxTopics, MaxEventFilters)
	}
	topics := make([]string, 0, len(f.Topics))
	for _, s := range f.Topics {
		kind, id, err := parseTopic(s)
		if err != nil {
			return nil, nil, err
		}
		if subscribing {
			if err := maySubscribe(p, kind, id); err != nil {
				return nil, nil, err
			}
		}
		topics = append(topics, topic(kind, id))
	}
	filters := make([]filter, 0, len(f.Events))
	for _, s := range f.Events {
		fl, err := parseFilter(s)
		if err != nil {
			return nil, nil, err
		}
		filters = append(filters, fl)
	}
	return topics, filters, nil
}

func (c *conn) subscribe(f clientFrame) {
	var cursor uuid.UUID
	if f.LastEventID != "" {
		id, err := uuid.Parse(f.LastEventID)
		if err != nil || id.Version() != 7 {
			c.sendError(f.RequestID, codeInvalidCursor, "last_event_id must be the id of an event this gateway sent.")
			return
		}
		cursor = id
	}
	c.mu.Lock()
	topics, filters, err := c.intents(f, true, c.principal)
	if err == nil && cursor != uuid.Nil && c.subscribed {
		err = refuse(codeResumeNotFirst, "last_event_id is accepted only in a connection's first subscribe frame.")
	}
	if err == nil && (len(unionOf(c.topics, topics)) > MaxTopics || len(unionOf(c.filters, filters)) > MaxEventFilters) {
		err = refuse(codeTooMany, "At most %d topics and %d event filters per connection.", MaxTopics, MaxEventFilters)
	}
	if err != nil {
		c.mu.Unlock()
		var fe *refusal
		errors.As(err, &fe)
		c.sendError(f.RequestID, fe.code, fe.message)
		return
	}
	for _, t := range topics {
		c.topics[t] = struct{}{}
	}
	for _, fl := range filters {
		c.filters[fl] = struct{}{}
	}
	c.subscribed = true
	ack := c.ackLocked(f.RequestID)
	if cursor == uuid.Nil {
		c.queueLocked(encode(ack))
		c.mu.Unlock()
		return
	}
	c.replaying = true
	c.mu.Unlock()
	// The replay runs beside the reader, which keeps answering the client's pings and ours meanwhile.
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.resume(cursor, ack)
	}()
}

// queueLocked queues a frame while c.mu is held, so it goes out ahead of any event the change it answers
// lets through; a full buffer is a client too slow to keep.
func (c *conn) queueLocked(frame []byte) {
	select {
	case c.out <- frame:
	default:
		c.slow()
	}
}

func (c *conn) unsubscribe(f clientFrame) {
	c.mu.Lock()
	topics, filters, err := c.intents(f, false, c.principal)
	if err != nil {
		c.mu.Unlock()
		var fe *refusal
		errors.As(err, &fe)
		c.sendError(f.RequestID, fe.code, fe.message)
		return
	}
	for _, t := range topics {
		delete(c.topics, t)
	}
	for _, fl := range filters {
		delete(c.filters, fl)
	}
	c.queueLocked(encode(c.ackLocked(f.RequestID)))
	c.mu.Unlock()
}

func (c *conn) ackLocked(requestID string) ackFrame {
	topics := slices.Sorted(maps.Keys(c.topics))
	filters := make([]string, 0, len(c.filters))
	for fl := range c.filters {
		filters = append(filters, string(fl))
	}
	slices.Sort(filters)
	return ackFrame{Type: frameAck, RequestID: requestID, Topics: topics, Events: filters}
}

func unionOf[K comparable](have map[K]struct{}, add []K) map[K]struct{} {
	out := maps.Clone(have)
	for _, k := range add {
		out[k] = struct{}{}
	}
	return out
}

// resume sends the organization's events after cursor that the connection wants, then the live events that
// arrived meanwhile, without sending any event twice across the seam: live events wait in held while the
// replay runs, and the replayed ids are remembered for a while to drop their live copies.
func (c *conn) resume(cursor uuid.UUID, ack ackFrame) {
	defer c.finishReplay()
	opts := c.gw.opts
	if time.Since(uuidv7.Time(cursor)) > opts.ReplayWindow {
		c.send(encode(ack))
		c.sendError(ack.RequestID, codeResyncRequired,
			"last_event_id is older than the replay window: reload state through the API, then subscribe without it.")
		return
	}
	var rows []dbq.EventListAnnouncedAfterRow
	ctx, cancel := context.WithTimeout(c.reqCtx, 15*time.Second)
	defer cancel()
	err := db.WithOrgTx(ctx, c.gw.pool, c.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		rows, err = c.gw.queries.EventListAnnouncedAfter(ctx, tx, dbq.EventListAnnouncedAfterParams{
			OrganizationID: c.org, After: cursor, Consumer: ConsumerName, MaxRows: int32(opts.ReplayLimit + 1)})
		return err
	})
	if err != nil && c.closing.Load() {
		return // the client left meanwhile
	}
	if err != nil {
		c.gw.logger.LogAttrs(ctx, slog.LevelError, "realtime resume failed",
			slog.String("request_id", reqctx.ID(c.reqCtx)), slog.String("cause", err.Error()))
		c.send(encode(ack))
		c.sendError(ack.RequestID, codeReplayFailed, "The missed events could not be read; reconnect and try again.")
		return
	}
	if len(rows) > opts.ReplayLimit {
		c.send(encode(ack))
		c.sendError(ack.RequestID, codeResyncRequired,
			"More events were missed than a resume replays: reload state through the API, then subscribe without last_event_id.")
		return
	}
	replay := make([]*event, 0, len(rows))
	seen := newIDWindow(opts.ReplayLimit + 1)
	c.mu.Lock()
	for _, r := range rows {
		e := eventFromRow(r.ID, r.OrganizationID, r.EventType, r.CreatedAt, r.Data)
		seen.add(e.id)
		if c.wantsLocked(e) {
			replay = append(replay, e)
		}
	}
	c.seen = seen
	c.mu.Unlock()
	n := len(replay)
	ack.Replayed = &n
	if !c.send(encode(ack)) {
		return
	}
	for _, e := range replay {
		if !c.send(e.encodeFrame(true)) {
			return
		}
	}
}

// finishReplay hands the live events held during a resume to the writer, then lets live events flow
// directly again.
func (c *conn) finishReplay() {
	for {
		c.mu.Lock()
		if len(c.held) == 0 {
			c.replaying = false
			c.seenUntil = time.Now().Add(seenGrace)
			c.mu.Unlock()
			return
		}
		e := c.held[0]
		c.held = c.held[1:]
		dup := c.seen != nil && c.seen.has(e.id)
		c.mu.Unlock()
		if !dup && !c.send(e.liveFrame()) {
			c.mu.Lock()
			c.replaying, c.held = false, nil
			c.mu.Unlock()
			return
		}
	}
}
