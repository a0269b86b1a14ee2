package actions

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
)

// MaxMoveIDs is how many messages one move request may name.
const MaxMoveIDs = 500

// Move moves the listed messages to their mailbox's folder of role folder (inbox, archive or trash) through
// mailsync.Move: the inbox shows them there at once and keeps their ids, and the move is relayed to each
// mailbox's server after the request commits. Messages of mailboxes outside the scope, and ids that name no
// message, are left alone. It answers the ids whose folder changed.
func Move(ctx context.Context, tx pgx.Tx, jobs events.Inserter, s Scope, ids []uuid.UUID, folder string) ([]uuid.UUID, error) {
	if s.Mailboxes != nil {
		var err error
		if ids, err = queries.InboxActionMessagesInScope(ctx, tx, dbq.InboxActionMessagesInScopeParams{OrganizationID: s.Org, Ids: ids,
			MailboxIds: s.mailboxFilter()}); err != nil || len(ids) == 0 {
			return nil, err
		}
	}
	return mailsync.Move(ctx, tx, jobs, s.Org, ids, folder)
}
