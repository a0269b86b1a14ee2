package mailsync

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
)

// Inbound is a newly stored message that came in (from any folder but Sent and Drafts, and not From the
// mailbox's own address), as the inbound hook is told it: what matching it to the mail it answers, and
// classifying it, need.
type Inbound struct {
	OrganizationID, MailboxID uuid.UUID
	// ID is the stored message's id (inbox_messages), which a verdict about it names as its evidence.
	ID uuid.UUID
	// MessageID and InReplyTo are Message-IDs in their "<id>" form; References lists the conversation's, oldest
	// first.
	MessageID, InReplyTo string
	References           []string
	// FromEmail is the sender's address, lower-cased; FromName its display name.
	FromEmail, FromName string
	Subject             string
	// ThreadID is the stored thread the message joined.
	ThreadID uuid.UUID
	// Text and HTML are the message's bodies as stored (the reply classifier reads HTML only when there is no
	// text).
	Text, HTML string
	// Headers are the headers the reply classifier reads (the auto-reply and list headers stored as
	// auto_headers), by canonical MIME name.
	Headers map[string][]string
	// ReceivedAt is when the mailbox's server received it (IMAP INTERNALDATE).
	ReceivedAt time.Time
	// OutOfOffice says the message is an automatic out-of-office reply (see outOfOffice). HoldUntil is when its
	// sender is back, when the message says so; this sync never reads it (zero), the inbox's classifier will.
	OutOfOffice bool
	HoldUntil   time.Time
	// Report is what the message reports when it is a delivery status notification (a bounce or a delay) or a
	// feedback-loop report (a complaint), as dsn.Parse reads it; nil for every other message. A report is
	// never an answer from the recipient: it is not a reply, and not an out-of-office reply either (a bounce
	// often says Auto-Submitted: auto-replied).
	Report *dsn.Report
}

// InboundHook is told each new inbound message inside the transaction that stores it, so what another area
// keeps about the message (a campaign lead that replied) commits or rolls back with it; an error rolls the
// batch back and the sync fetches it again. It is how mail reaches campaigns without mailsync importing them.
type InboundHook func(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m Inbound) error

// OnInbound sets the hook told every new inbound message (the composition root gives the campaign engine's
// reply matching); it is set once, before the syncer runs.
func (s *Syncer) OnInbound(h InboundHook) { s.inbound = h }

// outOfOffice is the rule that marks an automatic out-of-office reply until the inbox classifies replies with
// evidence: the message says it was sent automatically in answer to another (Auto-Submitted: auto-replied,
// RFC 3834), or its subject starts "Automatic reply" (Outlook and Exchange) or "Out of office", in any case.
func outOfOffice(autoSubmitted, subject string) bool {
	kind, _, _ := strings.Cut(autoSubmitted, ";")
	if strings.EqualFold(strings.TrimSpace(kind), "auto-replied") {
		return true
	}
	s := strings.ToLower(strings.TrimSpace(subject))
	return strings.HasPrefix(s, "automatic reply") || strings.HasPrefix(s, "out of office")
}
