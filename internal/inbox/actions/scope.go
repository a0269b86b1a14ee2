package actions

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

var queries = dbq.New()

// Scope is who acts: the organization and, for a mailbox-scoped API key, the only mailboxes it may touch.
type Scope struct {
	Org uuid.UUID
	// Mailboxes limits the action to these mailboxes; nil means every mailbox of the organization.
	Mailboxes []uuid.UUID
}

// allows reports whether the scope may touch mailbox m.
func (s Scope) allows(m uuid.UUID) bool {
	if s.Mailboxes == nil {
		return true
	}
	for _, id := range s.Mailboxes {
		if id == m {
			return true
		}
	}
	return false
}

// mailboxFilter is the scope as the queries take it (NULL: every mailbox).
func (s Scope) mailboxFilter() []uuid.UUID {
	if s.Mailboxes == nil {
		return nil
	}
	return append([]uuid.UUID{}, s.Mailboxes...)
}

// ErrThreadNotFound answers a thread id that is malformed, unknown, another organization's or of a mailbox the
// caller may not use alike, so the answer says nothing about threads the caller cannot see.
var ErrThreadNotFound = apierror.NotFound("thread_not_found", "thread_id names no inbox thread you can use.")

// errThreadRequired answers an empty thread_id.
var errThreadRequired = apierror.BadRequest("thread_id_required", "thread_id is required: the id of an inbox thread.")

// thread resolves a thread id as the client sent it.
func thread(ctx context.Context, tx pgx.Tx, s Scope, raw string) (dbq.InboxActionThreadRow, error) {
	if raw == "" {
		return dbq.InboxActionThreadRow{}, errThreadRequired
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return dbq.InboxActionThreadRow{}, ErrThreadNotFound
	}
	t, err := queries.InboxActionThread(ctx, tx, dbq.InboxActionThreadParams{OrganizationID: s.Org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !s.allows(t.MailboxID) {
		return dbq.InboxActionThreadRow{}, ErrThreadNotFound
	}
	return t, err
}
