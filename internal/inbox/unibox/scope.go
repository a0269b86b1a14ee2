package unibox

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

var queries = dbq.New()

// Querier is what the reads need from a transaction (a pgx.Tx from db.WithOrgTx).
type Querier interface {
	dbq.DBTX
}

// Scope is who reads: the organization, the user whose snoozes apply (uuid.Nil for a credential without
// one), and, for a mailbox-scoped API key, the only mailboxes it may read (nil: every mailbox).
type Scope struct {
	Org       uuid.UUID
	User      uuid.UUID
	Mailboxes []uuid.UUID
}

// allows reports whether the scope may read mailbox m.
func (s Scope) allows(m uuid.UUID) bool {
	return s.Mailboxes == nil || slices.Contains(s.Mailboxes, m)
}

// mailboxFilter is the scope as the queries take it (nil: every mailbox).
func (s Scope) mailboxFilter() []uuid.UUID {
	if s.Mailboxes == nil {
		return nil
	}
	return append([]uuid.UUID{}, s.Mailboxes...)
}

// narrow is the mailboxes of the scope among wanted (nil wanted: the scope's own).
func (s Scope) narrow(wanted []uuid.UUID) []uuid.UUID {
	if wanted == nil {
		return s.mailboxFilter()
	}
	out := []uuid.UUID{}
	for _, m := range wanted {
		if s.allows(m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// ErrThreadNotFound answers a thread id that is malformed, unknown, another organization's or of a mailbox
// the caller may not use alike, so the answer says nothing about threads the caller cannot see.
var ErrThreadNotFound = apierror.NotFound("thread_not_found", "thread_id names no inbox thread you can read.")

// ErrThreadRequired answers a thread read that names no thread.
var ErrThreadRequired = apierror.BadRequest("thread_id_required", "thread_id (or its alias id) is required: the id of an inbox thread.")

// ErrMessageNotFound answers a message id that is unknown, another organization's or of a mailbox the caller
// may not use.
var ErrMessageNotFound = apierror.NotFound("message_not_found", "No inbox message you can read has that id.")

// Thread is a resolved thread: its id, mailbox and conversation.
type Thread struct {
	ID, MailboxID   uuid.UUID
	ConversationKey string
}

// ResolveThread finds the thread raw names (the id as the client sent it) in the scope.
func ResolveThread(ctx context.Context, q Querier, s Scope, raw string) (Thread, error) {
	if raw == "" {
		return Thread{}, ErrThreadRequired
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return Thread{}, ErrThreadNotFound
	}
	t, err := queries.UniboxThreadGet(ctx, q, dbq.UniboxThreadGetParams{OrganizationID: s.Org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !s.allows(t.MailboxID) {
		return Thread{}, ErrThreadNotFound
	}
	if err != nil {
		return Thread{}, err
	}
	return Thread{ID: t.ID, MailboxID: t.MailboxID, ConversationKey: t.ConversationKey}, nil
}
