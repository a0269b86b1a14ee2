package actions

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Scheduled lists the replies and direct messages queued and not yet sent, next to leave first; threadID
// ("" for all) narrows it to one thread's. A thread id that is not an id matches nothing. At most
// MaxPendingSends can be queued, so the list is whole.
func Scheduled(ctx context.Context, tx pgx.Tx, s Scope, threadID string) ([]dbq.InboxActionScheduledRow, error) {
	var thread uuid.NullUUID
	if threadID != "" {
		id, err := uuid.Parse(threadID)
		if err != nil {
			return []dbq.InboxActionScheduledRow{}, nil
		}
		thread = uuid.NullUUID{UUID: id, Valid: true}
	}
	return queries.InboxActionScheduled(ctx, tx, dbq.InboxActionScheduledParams{OrganizationID: s.Org, ThreadID: thread,
		MailboxIds: s.mailboxFilter(), RowLimit: MaxPendingSends})
}

// errSendNotFound answers a task that is unknown, another organization's, already sent or settled, or not a
// reply or direct message (campaign and warmup sends are cancelled through their campaign or mailbox).
var errSendNotFound = apierror.NotFound("scheduled_send_not_found", "task_id names no reply or message of yours waiting to be sent.")

// CancelScheduled cancels a queued reply or direct message before it leaves: the task is marked canceled,
// and its job finds nothing to send when its time comes.
func CancelScheduled(ctx context.Context, tx pgx.Tx, s Scope, task uuid.UUID) error {
	n, err := queries.InboxActionCancelScheduled(ctx, tx, dbq.InboxActionCancelScheduledParams{OrganizationID: s.Org, ID: task,
		MailboxIds: s.mailboxFilter()})
	if err == nil && n == 0 {
		return errSendNotFound
	}
	return err
}
