package deliverability

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Kind is what came back from the recipient's side.
type Kind string

// The kinds Record takes.
const (
	KindBounce    Kind = "bounce"
	KindComplaint Kind = "complaint"
)

// The kinds only a provider or an integration posts besides those (POST /v1/deliverability/events). Note
// records them; what they cause is the path's that owns it (the unsubscribe link's, the tracking
// endpoints', the reply matching's), which the ingest calls in the same transaction.
const (
	KindUnsubscribe Kind = "unsubscribe"
	KindOpen        Kind = "open"
	KindClick       Kind = "click"
	KindReply       Kind = "reply"
)

// Source is the path an event came by, stored with it.
type Source string

// The sources of bounces and complaints.
const (
	// SourceDSN is a delivery status notification synced from the sending mailbox.
	SourceDSN Source = "dsn"
	// SourceARF is a feedback-loop report synced from the sending mailbox.
	SourceARF Source = "arf"
	// SourcePipeline is a recipient the recipient's server refused while the send pipeline handed the message
	// over (recipient_rejected); the engine's settle has moved the lead already.
	SourcePipeline Source = "pipeline"
	// SourceIngest is an event a provider or an integration posted.
	SourceIngest Source = "ingest"
)

// How an event was matched to its send (matched_by).
const (
	// MatchedMessageID: the returned message's Message-ID is the send's.
	MatchedMessageID = "message_id"
	// MatchedOriginalHeaders: the returned message had no Message-ID; its In-Reply-To or References name the send.
	MatchedOriginalHeaders = "original_headers"
	// MatchedPipeline: the send pipeline reported its own send's result.
	MatchedPipeline = "pipeline"
	// MatchedIngest: the ingested event named the send, its campaign or its contact.
	MatchedIngest = "ingest"
)

// Event is a bounce or complaint and its evidence, as a report, the pipeline or a provider states it.
type Event struct {
	OrganizationID uuid.UUID
	Kind           Kind
	Source         Source
	// Recipient is the address the event is about; Record normalizes it and refuses anything else.
	Recipient string
	// At is when it happened (the report's arrival); zero is the recorder's now.
	At time.Time
	// Bounce is hard or soft; bounces only.
	Bounce dsn.Severity
	// StatusCode (enhanced, e.g. 5.1.1), SMTPCode (e.g. 550, 0 when none) and Diagnostic are the server's words.
	StatusCode string
	SMTPCode   int
	Diagnostic string
	// Reason is the reason class (unknown_user, mailbox_full, policy, ...) or, ingested, the provider's reason.
	Reason string
	// FeedbackType is a complaint's ARF Feedback-Type (abuse, fraud, ...).
	FeedbackType string
	// Provider is the report's shape (postfix, exim, exchange, gmail, rfc3464, nonstandard, arf) or the
	// ingesting provider's name.
	Provider string
	// InboundMessageID is the synced message the event came in (inbox_messages), when it came in one.
	InboundMessageID uuid.NullUUID
	// Metadata is further evidence kept with the event (the report's rule, remote MTA, ...).
	Metadata map[string]any
	// IdempotencyKey records the event once; empty keys an event about a send by the send and its kind.
	IdempotencyKey string
}

// Evidence says in a few words what the event's server or provider said, for activity logs, failure reasons and
// notifications: the diagnostic text when there is one, else the codes and the reason class.
func (e Event) Evidence() string {
	if e.Diagnostic != "" {
		return e.Diagnostic
	}
	var parts []string
	if e.SMTPCode != 0 {
		parts = append(parts, fmt.Sprint(e.SMTPCode))
	}
	if e.StatusCode != "" {
		parts = append(parts, e.StatusCode)
	}
	if e.Reason != "" {
		parts = append(parts, e.Reason)
	}
	if e.FeedbackType != "" {
		parts = append(parts, "feedback type "+e.FeedbackType)
	}
	if len(parts) == 0 {
		return "no details given"
	}
	return strings.Join(parts, " ")
}

// Match is the send (or, ingested without one, the campaign and contact) an event is about.
type Match struct {
	// Task is the campaign send; nil when the event names none (an ingested event about an address).
	Task *dbq.SendTask
	// CampaignID and ContactID are the task's, or what an ingested event without a send named.
	CampaignID, ContactID uuid.NullUUID
	// By is how the match was made (the Matched constants).
	By string
}

// MatchSend is the match of a campaign send t, made by (one of the Matched constants): what the engine's settle
// hook records a rejected recipient against.
func MatchSend(t dbq.SendTask, by string) Match {
	return Match{Task: &t, CampaignID: t.CampaignID, ContactID: t.ContactID, By: by}
}

// Leads moves the lead of a campaign send a bounce or complaint was reported about after it was handed over. The
// sequence engine implements it: the lead's state, its queued send and its campaign's completion are the
// engine's. Both are told the event as recorded (its evidence for the lead's activity log and failure reason).
type Leads interface {
	// Bounced stops the lead as bounced on a hard bounce; on a soft one it has the step sent again within the
	// lead's attempt limit, and fails the lead past it.
	Bounced(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, task dbq.SendTask, ev Event) error
	// Complained stops the lead of a send its recipient reported as spam.
	Complained(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, task dbq.SendTask, ev Event) error
}

// Bounds of the evidence stored (the table's limits).
const (
	maxProvider   = 200
	maxReason     = 1000
	maxStatus     = 16
	maxDiagnostic = 2000
	maxFeedback   = 64
)

// checked validates an event and fills its defaults: the recipient normalized, the time, the key of an event
// about a send, the text bounded to what is stored. Its errors name the field as the ingest API has it.
func (e Event) checked(m Match, now time.Time) (Event, error) {
	switch e.Kind {
	case KindBounce:
		if e.Bounce != dsn.Hard && e.Bounce != dsn.Soft {
			return e, apierror.BadRequest("invalid_bounce_type", "A bounce is hard or soft.")
		}
	case KindComplaint, KindUnsubscribe, KindOpen, KindClick, KindReply:
		e.Bounce = ""
	default:
		return e, apierror.BadRequest("invalid_event_type", "event_type must be bounce, complaint, unsubscribe, open, click or reply.")
	}
	switch e.Source {
	case SourceDSN, SourceARF, SourcePipeline, SourceIngest:
	default:
		return e, fmt.Errorf("deliverability: unknown source %q", e.Source)
	}
	kind, address, ok := suppression.Normalize(e.Recipient)
	if !ok || kind != suppression.KindEmail {
		return e, apierror.BadRequest("invalid_recipient_email", "recipient_email must be one email address.")
	}
	e.Recipient = address
	if e.At.IsZero() {
		e.At = now
	}
	if e.SMTPCode < 200 || e.SMTPCode > 599 {
		e.SMTPCode = 0
	}
	e.Provider = truncate.Chars(e.Provider, maxProvider)
	e.Reason = truncate.Chars(e.Reason, maxReason)
	e.StatusCode = truncate.Chars(e.StatusCode, maxStatus)
	e.Diagnostic = truncate.Chars(e.Diagnostic, maxDiagnostic)
	e.FeedbackType = truncate.Chars(e.FeedbackType, maxFeedback)
	if e.IdempotencyKey == "" && m.Task != nil && (e.Kind == KindBounce || e.Kind == KindComplaint) {
		e.IdempotencyKey = fmt.Sprintf("%s:%s:%s", e.Kind, e.Bounce, m.Task.ID)
	}
	return e, nil
}
