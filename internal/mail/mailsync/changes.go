package mailsync

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// changed is a stored message as the queries that add, flag, move or delete messages answer it: what its
// inbox.* event says and the thread whose summaries it changes. The queries' rows convert to it.
type changed struct {
	ID, MailboxID, ThreadID                   uuid.UUID
	FolderRole, MessageID, FromEmail, Subject string
	Seen                                      bool
}

// EmailEvent is the data of inbox.email_received, inbox.email_updated and inbox.email_deleted: the message
// (EmailID, as the inbox's reads name it), its mailbox, thread and folder role, and what a receiver shows
// without reading it back. It stays small: bodies are read through the API.
type EmailEvent struct {
	EmailID        uuid.UUID `json:"email_id"`
	EmailAccountID uuid.UUID `json:"email_account_id"`
	ThreadID       uuid.UUID `json:"thread_id"`
	Folder         string    `json:"folder"`
	MessageID      string    `json:"message_id"`
	From           string    `json:"from"`
	Subject        string    `json:"subject"`
	Seen           bool      `json:"seen"`
}

// settle refreshes the summaries of the threads the messages are in (inbox_thread_refresh, once) and emits
// one event of eventType per message, both in tx; threads left without messages are dropped when drop is set.
func settle(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, org uuid.UUID, eventType events.Type, msgs []changed, drop bool) error {
	threads := make([]uuid.UUID, len(msgs))
	for i, m := range msgs {
		threads[i] = m.ThreadID
	}
	if err := refresh(ctx, tx, org, threads, drop); err != nil {
		return err
	}
	return emit(ctx, tx, outbox, eventType, msgs)
}

// emit emits one event of eventType per message in tx.
func emit(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, eventType events.Type, msgs []changed) error {
	if len(msgs) == 0 {
		return nil
	}
	data := make([]any, len(msgs))
	for i, m := range msgs {
		data[i] = EmailEvent{EmailID: m.ID, EmailAccountID: m.MailboxID, ThreadID: m.ThreadID, Folder: m.FolderRole,
			MessageID: m.MessageID, From: m.FromEmail, Subject: m.Subject, Seen: m.Seen}
	}
	_, err := outbox.EmitMany(ctx, tx, eventType, data)
	return err
}

// refresh recomputes the summaries of threads (duplicates allowed) and, when drop is set, deletes those of
// them no message is in any more.
func refresh(ctx context.Context, tx pgx.Tx, org uuid.UUID, threads []uuid.UUID, drop bool) error {
	slices.SortFunc(threads, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	threads = slices.Compact(threads)
	if len(threads) == 0 {
		return nil
	}
	if err := queries.InboxThreadRefresh(ctx, tx, dbq.InboxThreadRefreshParams{OrganizationID: org, Ids: threads}); err != nil {
		return err
	}
	if !drop {
		return nil
	}
	return queries.InboxThreadsDropEmpty(ctx, tx, dbq.InboxThreadsDropEmptyParams{OrganizationID: org, Ids: threads})
}
