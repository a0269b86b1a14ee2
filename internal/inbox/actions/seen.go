package actions

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
)

// MaxSeenIDs is how many messages one read/unread request may name.
const MaxSeenIDs = 500

// MarkSeen marks messages read (seen) or unread: those listed in ids, or, when ids is nil, every message of
// the folder role folder. Only messages whose state changes are written, each mailbox's through
// mailsync.MarkSeen in batches, which queues the relay to the mailbox's server in tx; so the relay runs after
// the request commits, and only for what changed. Messages of mailboxes outside the scope, and ids that name
// no message, are left alone. It answers how many messages changed.
func MarkSeen(ctx context.Context, tx pgx.Tx, jobs events.Inserter, s Scope, ids []uuid.UUID, folder string, seen bool) (int, error) {
	type target struct{ id, mailbox uuid.UUID }
	var targets []target
	if ids != nil {
		rows, err := queries.InboxActionSeenByIDs(ctx, tx, dbq.InboxActionSeenByIDsParams{OrganizationID: s.Org, Ids: ids, Seen: seen,
			MailboxIds: s.mailboxFilter()})
		if err != nil {
			return 0, err
		}
		for _, r := range rows {
			targets = append(targets, target{r.ID, r.MailboxID})
		}
	} else {
		rows, err := queries.InboxActionSeenInFolder(ctx, tx, dbq.InboxActionSeenInFolderParams{OrganizationID: s.Org, FolderRole: folder,
			Seen: seen, MailboxIds: s.mailboxFilter()})
		if err != nil {
			return 0, err
		}
		for _, r := range rows {
			targets = append(targets, target{r.ID, r.MailboxID})
		}
	}
	changed := 0
	// targets come ordered by mailbox: flush a batch at each mailbox change or when it is full.
	var batch []uuid.UUID
	flush := func(mailbox uuid.UUID) error {
		if len(batch) == 0 {
			return nil
		}
		n, err := mailsync.MarkSeen(ctx, tx, jobs, s.Org, mailbox, batch, seen)
		changed += n
		batch = batch[:0]
		return err
	}
	for i, t := range targets {
		batch = append(batch, t.id)
		if i+1 == len(targets) || targets[i+1].mailbox != t.mailbox || len(batch) == mailsync.MaxSeenBatch {
			if err := flush(t.mailbox); err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}
