package realtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// Channel is the Postgres NOTIFY channel every API instance's listener hears realtime notices on.
const Channel = "outflow_realtime"

// maxNotifyBytes is the largest payload NOTIFY accepts (Postgres refuses 8000 bytes or more).
const maxNotifyBytes = 7999

// ConsumerName is the Notifier's name among the event consumers. Its acknowledgement of an event commits
// with the event's notice, so the gateway's reads of past events (fetch, resume, catch-up) take the events
// acknowledged under this name: exactly those that were announced.
const ConsumerName = "realtime"

// Notifier is the event consumer that fans events out to every API instance: in its transaction of an
// event's dispatch, beside its acknowledgement, it publishes a notice with pg_notify, which Postgres delivers
// when (and only if) that transaction commits; a retried dispatch skips a consumer that acknowledged, so each
// event is announced once (and the hub drops a repeated id besides).
type Notifier struct {
	queries *dbq.Queries
}

// NewNotifier builds the consumer; register it with the event dispatcher.
func NewNotifier() *Notifier { return &Notifier{queries: dbq.New()} }

var _ events.Consumer = (*Notifier)(nil)

// Name is ConsumerName, the Notifier's name in its acknowledgements.
func (n *Notifier) Name() string { return ConsumerName }

// Consume publishes ev's notice in tx, the transaction that records the Notifier's acknowledgement of ev.
func (n *Notifier) Consume(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	payload, err := encodeNotice(ev)
	if err != nil {
		return err
	}
	if err := n.queries.EventNotify(ctx, tx, dbq.EventNotifyParams{Channel: Channel, Payload: payload}); err != nil {
		return fmt.Errorf("realtime: notify %s: %w", ev.Type, err)
	}
	return nil
}

// routing is what the gateway routes an event on besides its organization: the ids named by the event's
// data (part 1, "Realtime fanout").
type routing struct {
	UserID         uuid.UUID `json:"user_id,omitzero"`
	CampaignID     uuid.UUID `json:"campaign_id,omitzero"`
	EmailAccountID uuid.UUID `json:"email_account_id,omitzero"`
	OperationID    uuid.UUID `json:"operation_id,omitzero"`
}

// routingOf reads the routing fields from the top level of an event's data; fields that are absent or not
// ids are left out.
func routingOf(data json.RawMessage) routing {
	var fields struct {
		UserID         any `json:"user_id"`
		CampaignID     any `json:"campaign_id"`
		EmailAccountID any `json:"email_account_id"`
		OperationID    any `json:"operation_id"`
	}
	if json.Unmarshal(data, &fields) != nil {
		return routing{}
	}
	id := func(v any) uuid.UUID {
		s, _ := v.(string)
		u, err := uuid.Parse(s)
		if err != nil {
			return uuid.Nil
		}
		return u
	}
	return routing{UserID: id(fields.UserID), CampaignID: id(fields.CampaignID),
		EmailAccountID: id(fields.EmailAccountID), OperationID: id(fields.OperationID)}
}

// notice is the NOTIFY payload. It carries the whole event when it fits; otherwise only what identifies it
// (Fetch set), and each listener reads the event by id in an organization-scoped transaction.
type notice struct {
	ID        uuid.UUID `json:"id"`
	Org       uuid.UUID `json:"org"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	routing
	Data  json.RawMessage `json:"data,omitempty"`
	Fetch bool            `json:"fetch,omitempty"`
}

func encodeNotice(ev events.Event) (string, error) {
	full := notice{ID: ev.ID, Org: ev.OrganizationID, Type: ev.Type, CreatedAt: ev.CreatedAt,
		routing: routingOf(ev.Data), Data: ev.Data}
	b, err := json.Marshal(full)
	if err != nil {
		return "", fmt.Errorf("realtime: encode notice of %s: %w", ev.Type, err)
	}
	if len(b) <= maxNotifyBytes {
		return string(b), nil
	}
	b, err = json.Marshal(notice{ID: ev.ID, Org: ev.OrganizationID, Type: ev.Type, Fetch: true})
	if err != nil {
		return "", fmt.Errorf("realtime: encode notice of %s: %w", ev.Type, err)
	}
	return string(b), nil
}

// event is one event on its way to local connections.
type event struct {
	id        uuid.UUID
	org       uuid.UUID
	typ       events.Type
	info      events.Info
	known     bool // the type is in the catalog; unknown types are never delivered
	createdAt time.Time
	data      json.RawMessage
	routing
	topicList []string // the topics the event is published on

	once  sync.Once
	frame []byte // the live event frame, encoded once for every connection
}

func newEvent(id, org uuid.UUID, typ string, createdAt time.Time, data json.RawMessage, r routing) *event {
	info, known := events.Lookup(events.Type(typ))
	if info.Type == events.WebhookTest {
		known = false
	}
	e := &event{id: id, org: org, typ: events.Type(typ), info: info, known: known, createdAt: createdAt, data: data, routing: r}
	e.topicList = e.topics()
	return e
}

// eventFromRow builds an event read from the outbox, routing fields taken from its data.
func eventFromRow(id, org uuid.UUID, typ string, createdAt time.Time, data json.RawMessage) *event {
	return newEvent(id, org, typ, createdAt, data, routingOf(data))
}

// topics lists the topics the event is published on.
func (e *event) topics() []string {
	out := make([]string, 0, 5)
	out = append(out, topic(topicOrg, e.org))
	for _, t := range []struct {
		kind string
		id   uuid.UUID
	}{{topicUser, e.UserID}, {topicCampaign, e.CampaignID}, {topicAccount, e.EmailAccountID}, {topicBulk, e.OperationID}} {
		if t.id != uuid.Nil {
			out = append(out, topic(t.kind, t.id))
		}
	}
	return out
}

func (e *event) liveFrame() []byte {
	e.once.Do(func() { e.frame = e.encodeFrame(false) })
	return e.frame
}

func (e *event) encodeFrame(replay bool) []byte {
	data := e.data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return encode(eventFrame{Type: frameEvent, ID: e.id, EventType: string(e.typ), OrganizationID: e.org,
		CreatedAt: e.createdAt, Data: data, Replay: replay})
}
