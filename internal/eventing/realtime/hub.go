package realtime

import (
	"sync"

	"github.com/google/uuid"
)

// hub is one instance's registry of its WebSocket connections, by organization. Routing never blocks: each
// connection takes an event into its own bounded buffer or is dropped as too slow.
type hub struct {
	mu    sync.RWMutex
	conns map[uuid.UUID]map[*conn]struct{}

	seenMu sync.Mutex
	seen   *idWindow // events already routed, so the listener's catch-up never delivers one twice
}

func newHub() *hub {
	return &hub{conns: map[uuid.UUID]map[*conn]struct{}{}, seen: newIDWindow(8192)}
}

func (h *hub) add(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.conns[c.org]
	if set == nil {
		set = map[*conn]struct{}{}
		h.conns[c.org] = set
	}
	set[c] = struct{}{}
}

func (h *hub) remove(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if set := h.conns[c.org]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.conns, c.org)
		}
	}
}

// has reports whether any local connection belongs to org (events of other organizations are not fetched).
func (h *hub) has(org uuid.UUID) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.conns[org]) > 0
}

// orgs lists the organizations with local connections.
func (h *hub) orgs() []uuid.UUID {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]uuid.UUID, 0, len(h.conns))
	for org := range h.conns {
		out = append(out, org)
	}
	return out
}

// all lists every local connection.
func (h *hub) all() []*conn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*conn
	for _, set := range h.conns {
		for c := range set {
			out = append(out, c)
		}
	}
	return out
}

// route offers e to the connections of its organization, once per event id.
func (h *hub) route(e *event) {
	h.seenMu.Lock()
	dup := !h.seen.add(e.id)
	h.seenMu.Unlock()
	if dup {
		return
	}
	h.mu.RLock()
	targets := make([]*conn, 0, len(h.conns[e.org]))
	for c := range h.conns[e.org] {
		targets = append(targets, c)
	}
	h.mu.RUnlock()
	for _, c := range targets {
		c.offer(e)
	}
}

// idWindow remembers the last n ids added.
type idWindow struct {
	ring []uuid.UUID
	next int
	set  map[uuid.UUID]struct{}
}

func newIDWindow(n int) *idWindow {
	return &idWindow{ring: make([]uuid.UUID, n), set: make(map[uuid.UUID]struct{}, n)}
}

// add records id and reports whether it was new.
func (w *idWindow) add(id uuid.UUID) bool {
	if _, ok := w.set[id]; ok {
		return false
	}
	if old := w.ring[w.next]; old != uuid.Nil {
		delete(w.set, old)
	}
	w.ring[w.next] = id
	w.next = (w.next + 1) % len(w.ring)
	w.set[id] = struct{}{}
	return true
}

func (w *idWindow) has(id uuid.UUID) bool {
	_, ok := w.set[id]
	return ok
}
