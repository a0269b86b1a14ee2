package realtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/eventing/events"
)

// Subprotocol is the WebSocket subprotocol of the frames doc.go describes. The server always selects it, so
// a browser that offers a bearer value beside it never sees its token echoed back.
const Subprotocol = "outflow.v1"

// BearerProtocolPrefix starts the Sec-WebSocket-Protocol value that carries a credential for clients that
// cannot set an Authorization header (browsers): `bearer.<token>`.
const BearerProtocolPrefix = "bearer."

// Close codes the gateway ends a connection with, beside the standard 1000 (normal), 1001 (server shutting
// down) and 1009 (frame larger than MaxFrameBytes).
const (
	// CloseSlowConsumer: the client did not read fast enough and its send buffer filled up. Events after
	// the last one it received were not sent; reconnect with last_event_id to get them.
	CloseSlowConsumer = 4001
	// CloseCredentialInvalid: the credential the connection opened with was revoked, expired or lost the
	// right to subscribe. Reconnect with a valid one.
	CloseCredentialInvalid = 4003
)

// Protocol limits.
const (
	// MaxFrameBytes is the largest frame a client may send.
	MaxFrameBytes = 64 << 10
	// MaxTopics is how many topics one connection may hold.
	MaxTopics = 100
	// MaxEventFilters is how many event type filters one connection may hold.
	MaxEventFilters = 100
)

// Frame types. Clients send subscribe, unsubscribe and ping; the server sends ready, ack, event, error and
// pong.
const (
	frameSubscribe   = "subscribe"
	frameUnsubscribe = "unsubscribe"
	framePing        = "ping"
	frameReady       = "ready"
	frameAck         = "ack"
	frameEvent       = "event"
	frameError       = "error"
	framePong        = "pong"
)

// Error frame codes.
const (
	codeInvalidFrame    = "invalid_frame"
	codeInvalidTopic    = "invalid_topic"
	codeForbiddenTopic  = "forbidden_topic"
	codeInvalidEvent    = "invalid_event_filter"
	codeTooMany         = "too_many_subscriptions"
	codeInvalidCursor   = "invalid_last_event_id"
	codeResyncRequired  = "resync_required"
	codeResumeNotFirst  = "resume_not_allowed"
	codeReplayFailed    = "replay_failed"
	codeUnknownFrameTyp = "unknown_frame_type"
)

// clientFrame is any frame a client sends; Type says which fields apply.
type clientFrame struct {
	Type        string   `json:"type"`
	RequestID   string   `json:"request_id,omitempty"`
	Topics      []string `json:"topics,omitempty"`
	Events      []string `json:"events,omitempty"`
	LastEventID string   `json:"last_event_id,omitempty"`
}

// readyFrame is the first frame of every connection: who it is subscribed as.
type readyFrame struct {
	Type           string    `json:"type"`
	OrganizationID uuid.UUID `json:"organization_id"`
	UserID         uuid.UUID `json:"user_id,omitzero"`
}

// ackFrame confirms a subscribe or unsubscribe and states the connection's intents after it.
type ackFrame struct {
	Type      string   `json:"type"`
	RequestID string   `json:"request_id,omitempty"`
	Topics    []string `json:"topics"`
	Events    []string `json:"events"`
	// Replayed counts the events a resume sent after this frame (subscribe with last_event_id only).
	Replayed *int `json:"replayed,omitempty"`
}

// errorFrame reports a refused frame; the connection stays open.
type errorFrame struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// eventFrame carries one event, with the fields and names of a webhook delivery body.
type eventFrame struct {
	Type           string          `json:"type"`
	ID             uuid.UUID       `json:"id"`
	EventType      string          `json:"event_type"`
	OrganizationID uuid.UUID       `json:"organization_id"`
	CreatedAt      time.Time       `json:"created_at"`
	Data           json.RawMessage `json:"data"`
	// Replay marks events sent by a resume rather than live.
	Replay bool `json:"replay,omitempty"`
}

type pongFrame struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every frame is a plain struct of strings, uuids and raw JSON that came out of Postgres' jsonb.
		panic(fmt.Sprintf("realtime: encode frame: %v", err))
	}
	return b
}

// refusal is the refusal of one client frame, answered with an error frame.
type refusal struct {
	code, message string
}

func (e *refusal) Error() string { return e.code + ": " + e.message }

func refuse(code, format string, args ...any) *refusal {
	return &refusal{code: code, message: fmt.Sprintf(format, args...)}
}

// Topic kinds: what an event's routing field must equal for the topic to match.
const (
	topicUser     = "user"
	topicOrg      = "org"
	topicCampaign = "campaign"
	topicAccount  = "account"
	topicBulk     = "bulk"
)

// parseTopic checks a topic's form (`<kind>:<uuid>`) and returns it normalised (lowercase uuid).
func parseTopic(s string) (kind string, id uuid.UUID, err error) {
	kind, raw, ok := strings.Cut(s, ":")
	if !ok {
		return "", uuid.Nil, refuse(codeInvalidTopic, "Topic %q must look like org:<id>.", clip(s))
	}
	switch kind {
	case topicUser, topicOrg, topicCampaign, topicAccount, topicBulk:
	default:
		return "", uuid.Nil, refuse(codeInvalidTopic, "Topic %q: the kind must be user, org, campaign, account or bulk.", clip(s))
	}
	id, perr := uuid.Parse(raw)
	if perr != nil || len(raw) != 36 {
		return "", uuid.Nil, refuse(codeInvalidTopic, "Topic %q: %s must be followed by an id.", clip(s), kind)
	}
	return kind, id, nil
}

func topic(kind string, id uuid.UUID) string { return kind + ":" + id.String() }

// filter is one event intent: an exact event type, a family (`campaign.*`) or every type (`*`).
type filter string

// parseFilter checks an event filter against the catalog.
func parseFilter(s string) (filter, error) {
	if s == "*" {
		return filter(s), nil
	}
	if family, ok := strings.CutSuffix(s, ".*"); ok {
		for _, info := range events.Catalog {
			if info.Type != events.WebhookTest && familyOf(info.Type) == family {
				return filter(s), nil
			}
		}
		return "", refuse(codeInvalidEvent, "No event family %q: see GET /webhooks/event-types.", clip(s))
	}
	if _, ok := events.Lookup(events.Type(s)); !ok || events.Type(s) == events.WebhookTest {
		return "", refuse(codeInvalidEvent, "No event type %q: see GET /webhooks/event-types.", clip(s))
	}
	return filter(s), nil
}

// familyOf is the part of an event type before its first dot (`campaign` of `campaign.email_sent`).
func familyOf(t events.Type) string {
	family, _, _ := strings.Cut(string(t), ".")
	return family
}

// matchFilters applies a connection's event filters to an event type. No filter means every non-firehose
// event; a firehose event needs its exact type listed, as for webhook endpoints.
func matchFilters(filters map[filter]struct{}, info events.Info) bool {
	if _, ok := filters[filter(info.Type)]; ok {
		return true
	}
	if info.Firehose {
		return false
	}
	if len(filters) == 0 {
		return true
	}
	if _, ok := filters["*"]; ok {
		return true
	}
	_, ok := filters[filter(familyOf(info.Type)+".*")]
	return ok
}

// clip bounds a client-supplied value quoted back in an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
